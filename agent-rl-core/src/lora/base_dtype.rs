//! [`BaseDtype`]: the storage type of a LoRA run's frozen base weights, and the cast that
//! applies it.

use std::fmt;
use std::str::FromStr;

use burn::module::Param;
use burn::prelude::*;
use burn::tensor::{DType, FloatDType};
use serde::{Deserialize, Serialize};

use crate::error::CoreError;
use crate::model::Qwen2ForCausalLm;

/// How the frozen base weights of a LoRA model are stored (`lora.base_dtype`, default `f32`).
///
/// With `bf16` or `f16` the large matrices of the base — the embedding (and the tied or untied
/// head), every decoder layer's q/k/v, o, gate/up and down projections — are held in half
/// precision: half the bytes. Norm weights and biases (a few thousand values per layer), the
/// adapters, their gradients, AdamW's moments and every activation stay `f32`. Each product
/// widens the frozen weight per use: on burn's Flex CPU backend one block of columns at a time,
/// in the forward pass and again for the input gradient, so no full `f32` copy is ever kept;
/// on other backends (CUDA) the product runs in the weight's type (`x` cast to bf16, the
/// result cast back to `f32`, as PyTorch's autocast does). Full fine-tuning never uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseDtype {
    /// 32-bit floats: the base as loaded (the default).
    #[default]
    F32,
    /// bfloat16: `f32`'s range with 8 bits of mantissa.
    Bf16,
    /// IEEE half precision: 11 bits of mantissa, range up to 65504.
    F16,
}

impl BaseDtype {
    /// The name used in run files and on the command line (`f32`, `bf16`, `f16`).
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::Bf16 => "bf16",
            Self::F16 => "f16",
        }
    }

    /// burn's float type.
    pub fn float_dtype(self) -> FloatDType {
        match self {
            Self::F32 => FloatDType::F32,
            Self::Bf16 => FloatDType::BF16,
            Self::F16 => FloatDType::F16,
        }
    }

    /// Bytes per stored value.
    pub fn bytes(self) -> usize {
        match self {
            Self::F32 => 4,
            Self::Bf16 | Self::F16 => 2,
        }
    }
}

impl fmt::Display for BaseDtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BaseDtype {
    type Err = CoreError;

    /// `f32`, `bf16` or `f16`.
    fn from_str(text: &str) -> Result<Self, CoreError> {
        [Self::F32, Self::Bf16, Self::F16]
            .into_iter()
            .find(|dtype| dtype.name() == text)
            .ok_or_else(|| CoreError::InvalidArgument {
                field: "lora.base_dtype".into(),
                reason: format!("unknown type `{text}`; expected f32, bf16 or f16"),
            })
    }
}

/// `param` cast to `dtype` (same id; a frozen parameter stays frozen).
fn cast_param<B: Backend, const D: usize>(
    param: Param<Tensor<B, D>>,
    dtype: FloatDType,
) -> Param<Tensor<B, D>> {
    if param.dtype() == DType::from(dtype) {
        return param;
    }
    param.map(|tensor| tensor.cast(dtype))
}

/// `model` with its embedding, head and decoder projection weights stored as `dtype` (norms and
/// biases keep their type). Nothing else changes: the products cast per use.
pub(crate) fn cast_base_weights<B: Backend>(
    mut model: Qwen2ForCausalLm<B>,
    dtype: FloatDType,
) -> Qwen2ForCausalLm<B> {
    model.embed_tokens.weight = cast_param(model.embed_tokens.weight, dtype);
    model.lm_head = model.lm_head.map(|head| cast_param(head, dtype));
    for layer in &mut model.layers {
        let attention = &mut layer.self_attn;
        attention.qkv_proj.weight = cast_param(attention.qkv_proj.weight.clone(), dtype);
        attention.o_proj.weight = cast_param(attention.o_proj.weight.clone(), dtype);
        let mlp = &mut layer.mlp;
        mlp.gate_up_proj.weight = cast_param(mlp.gate_up_proj.weight.clone(), dtype);
        mlp.down_proj.weight = cast_param(mlp.down_proj.weight.clone(), dtype);
    }
    model
}

/// `model` (already frozen) with its base weights stored as `dtype`.
///
/// # Errors
/// [`CoreError::InvalidArgument`] (field `lora.base_dtype`) when the backend cannot hold and
/// compute with `dtype` (burn's NdArray stores only `f32`/`f64`).
pub(crate) fn store_base_as<B: Backend>(
    model: Qwen2ForCausalLm<B>,
    dtype: BaseDtype,
) -> Result<Qwen2ForCausalLm<B>, CoreError> {
    if dtype == BaseDtype::F32 {
        return Ok(model);
    }
    let device = model.device();
    if !B::supports_dtype(&device, DType::from(dtype.float_dtype())) {
        return Err(CoreError::InvalidArgument {
            field: "lora.base_dtype".into(),
            reason: format!(
                "is {dtype}, which the {} backend cannot store and compute with; use f32, or a \
                 backend with half-precision support (Flex on the CPU, CUDA)",
                B::name(&device)
            ),
        });
    }
    Ok(cast_base_weights(model, dtype.float_dtype()))
}

impl<B: Backend> Qwen2ForCausalLm<B> {
    /// The storage type of the embedding, head and projection weights: `f32` as loaded, half
    /// precision after [`crate::lora::apply_lora`] with a half [`BaseDtype`].
    pub fn base_weight_dtype(&self) -> DType {
        self.embed_tokens.weight.dtype()
    }
}
