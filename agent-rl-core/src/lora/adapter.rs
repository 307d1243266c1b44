//! [`LoraAdapter`]: one low-rank update `scale · B A x` beside a frozen projection, and the
//! per-layer groups [`AttentionLora`] and [`MlpLora`].

use burn::module::Param;
use burn::nn::Dropout;
use burn::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::config::{LoraConfig, LoraInit};
use crate::model::layout::contiguous;

/// The adapter of one projection `[in] → [out]`, stored in burn's `Linear` orientation (PEFT's
/// matrices transposed): the update of output features is `scale · dropout(x) · lora_a ·
/// lora_b`.
#[derive(Module, Debug)]
pub struct LoraAdapter<B: Backend> {
    /// `[in, r]`: PEFT's `lora_A.weight` (`[r, in]`) transposed.
    pub lora_a: Param<Tensor<B, 2>>,
    /// `[r, out]`: PEFT's `lora_B.weight` (`[out, r]`) transposed.
    pub lora_b: Param<Tensor<B, 2>>,
    /// Dropout on the adapter's input (active only on an autodiff backend, i.e. in training).
    pub dropout: Dropout,
    /// `alpha / r` (or `alpha / sqrt(r)` with rsLoRA).
    pub scale: f64,
}

impl<B: Backend> LoraAdapter<B> {
    /// A fresh adapter for a projection `[inputs] → [outputs]`: `A` drawn as `config.init`
    /// says from a ChaCha8 stream seeded by `seed` (the same on every backend), `B` zero.
    pub fn init(
        config: &LoraConfig,
        inputs: usize,
        outputs: usize,
        seed: u64,
        device: &B::Device,
    ) -> Self {
        let rank = config.r;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let a: Vec<f32> = match config.init {
            LoraInit::Kaiming => {
                let bound = 1.0 / (inputs.max(1) as f32).sqrt();
                (0..inputs * rank)
                    .map(|_| rng.random_range(-bound..bound))
                    .collect()
            }
            LoraInit::Gaussian => {
                let std = 1.0 / rank as f32;
                (0..inputs * rank)
                    .map(|_| {
                        let u1: f32 = rng.random::<f32>().max(f32::MIN_POSITIVE);
                        let u2: f32 = rng.random();
                        std * (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
                    })
                    .collect()
            }
        };
        let a = Tensor::from_data(TensorData::new(a, [inputs, rank]), device);
        Self::from_tensors(a, Tensor::zeros([rank, outputs], device), config)
    }

    /// An adapter with the given matrices (`a` `[in, r]`, `b` `[r, out]`, burn orientation),
    /// as new trainable leaves (detached from any graph they came from), with `config`'s scale
    /// and dropout.
    pub fn from_tensors(a: Tensor<B, 2>, b: Tensor<B, 2>, config: &LoraConfig) -> Self {
        Self {
            lora_a: Param::from_tensor(a.detach()),
            lora_b: Param::from_tensor(b.detach()),
            dropout: Dropout {
                prob: config.dropout,
            },
            scale: config.scale(),
        }
    }

    /// The rank `r`.
    pub fn rank(&self) -> usize {
        self.lora_a.dims()[1]
    }

    /// `scale · dropout(x) · A · B`: the update to add to the frozen projection's output.
    ///
    /// # Shapes
    /// - `x`: `[batch, seq, in]` → `[batch, seq, out]`
    pub fn delta(&self, x: Tensor<B, 3>) -> Tensor<B, 3> {
        let [batch, seq, features] = x.dims();
        let tokens = contiguous(self.dropout.forward(x)).reshape([batch * seq, features]);
        // Scaling the `[tokens, r]` product costs less than scaling the output.
        let low = crate::fused::linear(tokens, self.lora_a.val(), None).mul_scalar(self.scale);
        let out = crate::fused::linear(low, self.lora_b.val(), None);
        let width = out.dims()[1];
        out.reshape([batch, seq, width])
    }

    /// `scale · A · B` (`[in, out]`): what merging adds to the base weight (burn orientation).
    pub fn merged_update(&self) -> Tensor<B, 2> {
        self.lora_a
            .val()
            .matmul(self.lora_b.val())
            .mul_scalar(self.scale)
    }
}

/// `base + adapter.delta(x)` when there is an adapter, else `base`.
///
/// # Shapes
/// - `x`: `[batch, seq, in]`, `base`: `[batch, seq, out]` → `[batch, seq, out]`
pub(crate) fn with_delta<B: Backend>(
    adapter: Option<&LoraAdapter<B>>,
    x: &Tensor<B, 3>,
    base: Tensor<B, 3>,
) -> Tensor<B, 3> {
    match adapter {
        Some(adapter) => base + adapter.delta(x.clone()),
        None => base,
    }
}

/// The adapters of one attention block, by HF projection (each `None` when not targeted).
#[derive(Module, Debug)]
pub struct AttentionLora<B: Backend> {
    /// On `self_attn.q_proj`.
    pub q_proj: Option<LoraAdapter<B>>,
    /// On `self_attn.k_proj`.
    pub k_proj: Option<LoraAdapter<B>>,
    /// On `self_attn.v_proj`.
    pub v_proj: Option<LoraAdapter<B>>,
    /// On `self_attn.o_proj`.
    pub o_proj: Option<LoraAdapter<B>>,
}

/// The adapters of one MLP, by HF projection (each `None` when not targeted).
#[derive(Module, Debug)]
pub struct MlpLora<B: Backend> {
    /// On `mlp.gate_proj`.
    pub gate_proj: Option<LoraAdapter<B>>,
    /// On `mlp.up_proj`.
    pub up_proj: Option<LoraAdapter<B>>,
    /// On `mlp.down_proj`.
    pub down_proj: Option<LoraAdapter<B>>,
}
