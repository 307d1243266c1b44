//! One pre-norm decoder layer.

use burn::prelude::*;

use super::attention::Attention;
use super::mask::AttentionInputs;
use super::mlp::Mlp;
use super::rms_norm::RmsNorm;

/// `x + attn(norm(x))`, then `x + mlp(norm(x))`.
#[derive(Module, Debug)]
pub struct DecoderLayer<B: Backend> {
    /// Norm before attention.
    pub input_layernorm: RmsNorm<B>,
    /// Self-attention.
    pub self_attn: Attention<B>,
    /// Norm before the MLP.
    pub post_attention_layernorm: RmsNorm<B>,
    /// Gated MLP.
    pub mlp: Mlp<B>,
}

impl<B: Backend> DecoderLayer<B> {
    /// # Shapes
    /// - `x`: `[batch, seq, hidden]` → same
    pub fn forward(
        &self,
        x: Tensor<B, 3>,
        inputs: &AttentionInputs<B>,
        cache: Option<&mut Option<(Tensor<B, 4>, Tensor<B, 4>)>>,
    ) -> Tensor<B, 3> {
        let attended =
            self.self_attn
                .forward(self.input_layernorm.forward(x.clone()), inputs, cache);
        let x = x + attended;
        x.clone() + self.mlp.forward(self.post_attention_layernorm.forward(x))
    }
}
