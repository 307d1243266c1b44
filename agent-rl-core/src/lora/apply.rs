//! Adding, removing and merging adapters on a [`Qwen2ForCausalLm`].

use burn::module::{Module, Param};
use burn::prelude::*;
use burn::tensor::FloatDType;

use super::adapter::{AttentionLora, LoraAdapter, MlpLora};
use super::base_dtype::{cast_base_weights, store_base_as};
use super::config::{LoraConfig, LoraTarget};
use crate::config::Qwen2Config;
use crate::error::CoreError;
use crate::model::{DecoderLayer, Qwen2ForCausalLm};

impl LoraTarget {
    /// `(in, out)` features of this projection in a model of `config`.
    pub fn features(self, config: &Qwen2Config) -> (usize, usize) {
        let hidden = config.hidden_size;
        let q = config.num_attention_heads * config.head_size();
        let kv = config.kv_heads() * config.head_size();
        let inter = config.intermediate_size;
        match self {
            Self::QProj => (hidden, q),
            Self::KProj | Self::VProj => (hidden, kv),
            Self::OProj => (q, hidden),
            Self::GateProj | Self::UpProj => (hidden, inter),
            Self::DownProj => (inter, hidden),
        }
    }
}

impl LoraConfig {
    /// Trainable parameters the adapters add to a model of `model`: `r · (in + out)` per
    /// targeted projection per layer (0 when the target list is invalid).
    pub fn parameter_count(&self, model: &Qwen2Config) -> usize {
        let per_layer: usize = self
            .targets()
            .unwrap_or_default()
            .into_iter()
            .map(|target| {
                let (inputs, outputs) = target.features(model);
                self.r * (inputs + outputs)
            })
            .sum();
        per_layer * model.num_hidden_layers
    }
}

/// The adapter of `target` in `layer`, if any.
pub(crate) fn adapter_of<B: Backend>(
    layer: &DecoderLayer<B>,
    target: LoraTarget,
) -> Option<&LoraAdapter<B>> {
    let attn = layer.self_attn.lora.as_ref();
    let mlp = layer.mlp.lora.as_ref();
    match target {
        LoraTarget::QProj => attn?.q_proj.as_ref(),
        LoraTarget::KProj => attn?.k_proj.as_ref(),
        LoraTarget::VProj => attn?.v_proj.as_ref(),
        LoraTarget::OProj => attn?.o_proj.as_ref(),
        LoraTarget::GateProj => mlp?.gate_proj.as_ref(),
        LoraTarget::UpProj => mlp?.up_proj.as_ref(),
        LoraTarget::DownProj => mlp?.down_proj.as_ref(),
    }
}

/// Installs `make(target)`'s adapters in `layer` (replacing any there).
pub(crate) fn set_adapters<B: Backend>(
    layer: &mut DecoderLayer<B>,
    mut make: impl FnMut(LoraTarget) -> Option<LoraAdapter<B>>,
) {
    layer.self_attn.lora = Some(AttentionLora {
        q_proj: make(LoraTarget::QProj),
        k_proj: make(LoraTarget::KProj),
        v_proj: make(LoraTarget::VProj),
        o_proj: make(LoraTarget::OProj),
    });
    layer.mlp.lora = Some(MlpLora {
        gate_proj: make(LoraTarget::GateProj),
        up_proj: make(LoraTarget::UpProj),
        down_proj: make(LoraTarget::DownProj),
    });
}

/// `model` with its base weights frozen (no gradients, no optimizer state), stored as
/// `config.base_dtype`, and fresh adapters (`A` seeded from `seed`, `B` zero, so the outputs are
/// unchanged) on `config`'s targets.
///
/// ```
/// use agent_rl_core::lora::{LoraConfig, apply_lora};
/// use agent_rl_core::weights::random_model;
/// use agent_rl_core::Qwen2Config;
/// use burn::backend::{Autodiff, Flex};
/// let model = random_model::<Autodiff<Flex>>(&Qwen2Config::tiny(), 1, 0.2, &Default::default())?;
/// let model = apply_lora(model, &LoraConfig { r: 4, ..LoraConfig::default() }, 0)?;
/// assert!(model.has_adapters());
/// # Ok::<(), agent_rl_core::CoreError>(())
/// ```
///
/// # Errors
/// [`CoreError::InvalidArgument`] for an invalid config (the field named), a model that
/// already has adapters (field `model`), or a half-precision `base_dtype` the backend cannot
/// compute with (field `lora.base_dtype`).
pub fn apply_lora<B: Backend>(
    model: Qwen2ForCausalLm<B>,
    config: &LoraConfig,
    seed: u64,
) -> Result<Qwen2ForCausalLm<B>, CoreError> {
    config.validate()?;
    if model.has_adapters() {
        return Err(CoreError::InvalidArgument {
            field: "model".into(),
            reason: "already has LoRA adapters; merge or remove them first".into(),
        });
    }
    let targets = config.targets()?;
    let device = model.device();
    let mut model = store_base_as(model.no_grad(), config.base_dtype)?;
    let model_config = model.config.clone();
    for (index, layer) in model.layers.iter_mut().enumerate() {
        set_adapters(layer, |target| {
            targets.contains(&target).then(|| {
                let (inputs, outputs) = target.features(&model_config);
                let stream = seed
                    .wrapping_mul(1_000_003)
                    .wrapping_add((index * LoraTarget::ALL.len() + target as usize) as u64);
                LoraAdapter::init(config, inputs, outputs, stream, &device)
            })
        });
    }
    Ok(model)
}

/// `weight` with `update` added to columns `start..start + update.dims()[1]`, detached, keeping
/// the parameter's id and gradient requirement.
fn add_columns<B: Backend>(
    weight: Param<Tensor<B, 2>>,
    start: usize,
    update: Tensor<B, 2>,
) -> Param<Tensor<B, 2>> {
    weight.map(|w| {
        let wants_grad = w.is_require_grad();
        let [rows, cols] = w.dims();
        let width = update.dims()[1];
        let mut parts = Vec::new();
        if start > 0 {
            parts.push(Tensor::zeros([rows, start], &w.device()));
        }
        parts.push(update);
        if start + width < cols {
            parts.push(Tensor::zeros([rows, cols - start - width], &w.device()));
        }
        (w + Tensor::cat(parts, 1))
            .detach()
            .set_require_grad(wants_grad)
    })
}

impl<B: Backend> Qwen2ForCausalLm<B> {
    /// Whether any layer carries LoRA adapters.
    pub fn has_adapters(&self) -> bool {
        self.layers
            .iter()
            .any(|l| l.self_attn.lora.is_some() || l.mlp.lora.is_some())
    }

    /// The base model: this model without its adapters. The weights are shared, not copied
    /// (burn parameters are reference-counted), so this is how a LoRA run scores with the
    /// reference policy.
    pub fn without_adapters(&self) -> Self {
        let mut base = self.clone();
        for layer in &mut base.layers {
            layer.self_attn.lora = None;
            layer.mlp.lora = None;
        }
        base
    }

    /// This model with every adapter folded into its base weight (`W + scale · B A`, PEFT's
    /// `merge_and_unload`) and removed: a plain model that [`crate::weights::save_pretrained`]
    /// writes as a full Hugging Face checkpoint. A half-precision base
    /// ([`super::BaseDtype`]) comes back in the model's own float type (its norms'), so the
    /// merged model is an ordinary one.
    pub fn merge_adapters(self) -> Self {
        let float = FloatDType::from(self.norm.weight.dtype());
        let mut model = cast_base_weights(self, float);
        let config = model.config.clone();
        let q = config.num_attention_heads * config.head_size();
        let kv = config.kv_heads() * config.head_size();
        let inter = config.intermediate_size;
        for layer in &mut model.layers {
            let attn = layer.self_attn.lora.take();
            let mlp = layer.mlp.lora.take();
            let fused = [
                (attn.as_ref().and_then(|l| l.q_proj.as_ref()), 0, true),
                (attn.as_ref().and_then(|l| l.k_proj.as_ref()), q, true),
                (attn.as_ref().and_then(|l| l.v_proj.as_ref()), q + kv, true),
                (mlp.as_ref().and_then(|l| l.gate_proj.as_ref()), 0, false),
                (mlp.as_ref().and_then(|l| l.up_proj.as_ref()), inter, false),
            ];
            for (adapter, start, in_attention) in fused {
                let Some(adapter) = adapter else { continue };
                let linear = if in_attention {
                    &mut layer.self_attn.qkv_proj
                } else {
                    &mut layer.mlp.gate_up_proj
                };
                let weight = linear.weight.clone();
                linear.weight = add_columns(weight, start, adapter.merged_update());
            }
            if let Some(adapter) = attn.as_ref().and_then(|l| l.o_proj.as_ref()) {
                let weight = layer.self_attn.o_proj.weight.clone();
                layer.self_attn.o_proj.weight = add_columns(weight, 0, adapter.merged_update());
            }
            if let Some(adapter) = mlp.as_ref().and_then(|l| l.down_proj.as_ref()) {
                let weight = layer.mlp.down_proj.weight.clone();
                layer.mlp.down_proj.weight = add_columns(weight, 0, adapter.merged_update());
            }
        }
        model
    }
}
