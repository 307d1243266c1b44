//! The Qwen2 decoder in burn, generic over the backend.
//!
//! Layers mirror Hugging Face's module names (`self_attn`, `mlp`, `input_layernorm`, …) so the
//! checkpoint remap stays small. Two projections are fused for speed on every backend: q/k/v into
//! `self_attn.qkv_proj` and gate/up into `mlp.gate_up_proj`; the loader and the saver split and
//! join them at the checkpoint boundary (see [`crate::weights`]).

mod attention;
mod attention_mask;
mod checkpointing;
mod decoder_layer;
mod kv_cache;
pub(crate) mod layout;
mod mask;
mod mlp;
mod qwen2;
mod rms_norm;
mod rotary;
mod score_head;

pub use attention::Attention;
pub use attention_mask::AttentionMask;
pub use checkpointing::{CheckpointedLayers, backward_through};
pub use decoder_layer::DecoderLayer;
pub use kv_cache::KvCache;
pub use mask::{AttentionInputs, positions_from_mask};
pub use mlp::Mlp;
pub use qwen2::Qwen2ForCausalLm;
pub(crate) use qwen2::ids_tensor as qwen2_ids_tensor;
pub use rms_norm::RmsNorm;
pub use rotary::{RotaryShape, RotaryTables};
pub use score_head::{Qwen2ForSequenceClassification, SCORE_HEAD_INIT_STD, last_token_indices};
