//! LoRA: low-rank adapters on a frozen Qwen2 model, PEFT-compatible.
//!
//! [`apply_lora`] freezes a model's weights (burn's `no_grad`: no gradients, no optimizer
//! state) and adds an adapter to each targeted projection. Adapters follow PEFT's Hugging Face
//! module names even where the model fuses projections (`q/k/v_proj` → `qkv_proj`,
//! `gate/up_proj` → `gate_up_proj`): each adds `scale · B A x` to its own slice of the fused
//! output. Adapters run through the same fused CPU kernels as the base model on Flex and as
//! plain tensor ops on every other backend.
//!
//! | need | item |
//! |---|---|
//! | settings (`[lora]` in run files) | [`LoraConfig`], [`LoraTarget`], [`LoraInit`] |
//! | frozen base in bf16/f16 | [`LoraConfig::base_dtype`], [`BaseDtype`] |
//! | add adapters | [`apply_lora`] |
//! | reference policy (adapters off, no copy) | [`Qwen2ForCausalLm::without_adapters`] |
//! | full checkpoint | [`Qwen2ForCausalLm::merge_adapters`] then [`crate::weights::save_pretrained`], or [`merge_adapter_checkpoint`] on directories |
//! | PEFT files | [`save_adapter`], [`load_adapter`], [`read_adapter_config`] |
//!
//! [`Qwen2ForCausalLm::without_adapters`]: crate::Qwen2ForCausalLm::without_adapters
//! [`Qwen2ForCausalLm::merge_adapters`]: crate::Qwen2ForCausalLm::merge_adapters

mod adapter;
mod apply;
mod base_dtype;
mod config;
mod merge;
mod peft;
mod peft_config;

pub(crate) use adapter::with_delta;
pub use adapter::{AttentionLora, LoraAdapter, MlpLora};
pub use apply::apply_lora;
pub use base_dtype::BaseDtype;
pub use config::{LoraConfig, LoraInit, LoraTarget};
pub use merge::merge_adapter_checkpoint;
pub use peft::{ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, load_adapter, peft_key, save_adapter};
pub use peft_config::{peft_config_json, read_adapter_config};
