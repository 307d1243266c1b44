//! [`MemoryPlanRequest`]: what the planner needs to know about a run.

use agent_rl_core::Qwen2Config;
use serde::{Deserialize, Serialize};

use crate::error::{AlgoError, Result};

/// The training method being planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrainMethod {
    /// Supervised fine-tuning: `batch_size` sequences of `max_prompt_length +
    /// max_completion_length` tokens per micro-batch, loss over every position.
    Sft,
    /// GRPO: `prompts_per_step × num_generations` rollouts per step, split into
    /// `gradient_accumulation_steps` micro-batches, loss over the completion positions.
    Grpo,
}

/// A projection LoRA can adapt, by its PEFT / Hugging Face name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetModule {
    /// `q_proj`.
    Q,
    /// `k_proj`.
    K,
    /// `v_proj`.
    V,
    /// `o_proj`.
    O,
    /// `gate_proj`.
    Gate,
    /// `up_proj`.
    Up,
    /// `down_proj`.
    Down,
}

impl TargetModule {
    /// Every projection (PEFT's `all-linear` on Qwen2, which leaves `lm_head` out).
    pub const ALL: [TargetModule; 7] = [
        TargetModule::Q,
        TargetModule::K,
        TargetModule::V,
        TargetModule::O,
        TargetModule::Gate,
        TargetModule::Up,
        TargetModule::Down,
    ];

    /// Parses `q`, `q_proj`, … `down_proj`; `all-linear` gives [`TargetModule::ALL`].
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] naming `lora.target_modules` for an unknown name.
    pub fn parse_list(text: &str) -> Result<Vec<TargetModule>> {
        let mut modules = Vec::new();
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let name = name.to_ascii_lowercase();
            if name == "all-linear" || name == "all_linear" {
                return Ok(Self::ALL.to_vec());
            }
            let module = match name.strip_suffix("_proj").unwrap_or(&name) {
                "q" => Self::Q,
                "k" => Self::K,
                "v" => Self::V,
                "o" => Self::O,
                "gate" => Self::Gate,
                "up" => Self::Up,
                "down" => Self::Down,
                _ => {
                    return Err(AlgoError::InvalidConfig {
                        field: "lora.target_modules".into(),
                        reason: format!(
                            "unknown module `{name}`; use q, k, v, o, gate, up, down (or \
                             their `_proj` names) or all-linear"
                        ),
                    });
                }
            };
            if !modules.contains(&module) {
                modules.push(module);
            }
        }
        Ok(modules)
    }
}

/// The LoRA settings that change memory: rank and adapted projections.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoraPlan {
    /// Rank `r`; at least 1.
    pub r: usize,
    /// Adapted projections; not empty.
    pub target_modules: Vec<TargetModule>,
}

impl LoraPlan {
    /// Rank `r` on every projection (`all-linear`).
    pub fn all_linear(r: usize) -> Self {
        Self {
            r,
            target_modules: TargetModule::ALL.to_vec(),
        }
    }
}

/// Storage type of the model weights (the frozen base under LoRA; every weight, with its gradient
/// and optimizer state, in full fine-tuning, where it is the backend's float type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WeightDtype {
    /// 4 bytes.
    F32,
    /// 2 bytes.
    Bf16,
    /// 2 bytes.
    F16,
}

impl WeightDtype {
    /// Bytes per element.
    pub fn bytes(self) -> u64 {
        match self {
            Self::F32 => 4,
            Self::Bf16 | Self::F16 => 2,
        }
    }

    /// Parses `f32`/`float32`, `bf16`/`bfloat16`, `f16`/`float16`/`fp16`.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] naming `weight_dtype`.
    pub fn parse(text: &str) -> Result<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "f32" | "fp32" | "float32" => Ok(Self::F32),
            "bf16" | "bfloat16" => Ok(Self::Bf16),
            "f16" | "fp16" | "float16" => Ok(Self::F16),
            other => Err(AlgoError::InvalidConfig {
                field: "weight_dtype".into(),
                reason: format!("unknown dtype `{other}`; use f32, bf16 or f16"),
            }),
        }
    }
}

/// Most sequences per optimiser step (and per micro-batch) the planner takes: far above any
/// run, and small enough that no estimate overflows.
pub const MAX_SEQUENCES_PER_STEP: usize = 1 << 24;

/// Most tokens per sequence (`max_prompt_length + max_completion_length`) the planner takes.
pub const MAX_SEQUENCE_TOKENS: usize = 1 << 24;

/// Largest model dimensions the planner takes, by `config.json` field (each far above any
/// released model's, and small enough that parameter counts fit 64 bits).
const MODEL_LIMITS: [(&str, usize); 7] = [
    ("hidden_size", 1 << 20),
    ("intermediate_size", 1 << 20),
    ("num_hidden_layers", 1 << 10),
    ("num_attention_heads", 1 << 10),
    ("num_key_value_heads", 1 << 10),
    ("head_dim", 1 << 14),
    ("vocab_size", 1 << 24),
];

/// `value` unless it is above `limit`; the error names `field`.
fn at_most(field: &str, value: usize, limit: usize) -> Result<usize> {
    if value > limit {
        return Err(AlgoError::InvalidConfig {
            field: field.into(),
            reason: format!("{value} is above the planner's limit of {limit}"),
        });
    }
    Ok(value)
}

/// Everything the memory planner needs about a run (mirrors the trainer configs' names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryPlanRequest {
    /// The model's hyper-parameters (a `config.json` or a [`preset`](super::preset)).
    pub model: Qwen2Config,
    /// SFT or GRPO.
    pub method: TrainMethod,
    /// LoRA adapters on a frozen base; `None` = full fine-tuning.
    pub lora: Option<LoraPlan>,
    /// SFT: sequences per micro-batch (`SftConfig::batch_size`). Default 8.
    pub batch_size: usize,
    /// GRPO: prompts per step. Default 8.
    pub prompts_per_step: usize,
    /// GRPO: completions per prompt K. Default 8.
    pub num_generations: usize,
    /// Micro-batches per optimiser step; `None` = the fewest that fit (GRPO; SFT uses 1).
    pub gradient_accumulation_steps: Option<usize>,
    /// Prompt tokens (SFT: the part of `max_length` before the completion). Default 512.
    pub max_prompt_length: usize,
    /// Completion tokens. Default 1024.
    pub max_completion_length: usize,
    /// Weight storage type. Default f32.
    pub weight_dtype: WeightDtype,
    /// Recompute each decoder layer in the backward pass, keeping only its input.
    pub gradient_checkpointing: bool,
    /// GRPO: KL coefficient β; a reference model is kept when `beta > 0`. Default 0.04.
    pub beta: f32,
    /// Device memory in bytes to check the plan against; `None` = no verdict.
    pub device_memory: Option<u64>,
}

impl MemoryPlanRequest {
    /// Defaults for `model`: GRPO, full fine-tuning in f32, 8 prompts × 8 completions,
    /// 512 + 1024 tokens, β 0.04, micro-batching chosen to fit, no device.
    pub fn new(model: Qwen2Config) -> Self {
        Self {
            model,
            method: TrainMethod::Grpo,
            lora: None,
            batch_size: 8,
            prompts_per_step: 8,
            num_generations: 8,
            gradient_accumulation_steps: None,
            max_prompt_length: 512,
            max_completion_length: 1024,
            weight_dtype: WeightDtype::F32,
            gradient_checkpointing: false,
            beta: 0.04,
            device_memory: None,
        }
    }

    /// Checks the request; errors name the field.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] for a zero size, a LoRA rank of 0 or no target module, a
    /// negative or non-finite β, a model config the model itself refuses, or a size above the
    /// planner's limits ([`MAX_SEQUENCES_PER_STEP`], [`MAX_SEQUENCE_TOKENS`], model dimensions),
    /// products included.
    pub fn validate(&self) -> Result<()> {
        self.model
            .validate()
            .map_err(|error| AlgoError::InvalidConfig {
                field: "model".into(),
                reason: error.to_string(),
            })?;
        let model = &self.model;
        let heads = model.num_attention_heads;
        let dimensions = [
            model.hidden_size,
            model.intermediate_size,
            model.num_hidden_layers,
            heads,
            model.num_key_value_heads.unwrap_or(heads),
            model.head_dim.unwrap_or(model.hidden_size / heads.max(1)),
            model.vocab_size,
        ];
        for ((field, limit), value) in MODEL_LIMITS.into_iter().zip(dimensions) {
            at_most(&format!("model.{field}"), value, limit)?;
        }
        let per_step = |field: &str, left: usize, right: usize| {
            let product = left.checked_mul(right).unwrap_or(usize::MAX);
            at_most(field, product, MAX_SEQUENCES_PER_STEP)
        };
        per_step(
            "prompts_per_step × num_generations",
            self.prompts_per_step,
            self.num_generations,
        )?;
        if self.method == TrainMethod::Sft {
            per_step(
                "batch_size × gradient_accumulation_steps",
                self.batch_size,
                self.gradient_accumulation_steps.unwrap_or(1),
            )?;
        }
        at_most(
            "gradient_accumulation_steps",
            self.gradient_accumulation_steps.unwrap_or(1),
            MAX_SEQUENCES_PER_STEP,
        )?;
        at_most(
            "max_prompt_length + max_completion_length",
            self.max_prompt_length
                .checked_add(self.max_completion_length)
                .unwrap_or(usize::MAX),
            MAX_SEQUENCE_TOKENS,
        )?;
        if let Some(lora) = &self.lora {
            at_most("lora.r", lora.r, 1 << 20)?;
        }
        let sizes = [
            ("batch_size", self.batch_size),
            ("prompts_per_step", self.prompts_per_step),
            ("num_generations", self.num_generations),
            ("max_completion_length", self.max_completion_length),
            (
                "gradient_accumulation_steps",
                self.gradient_accumulation_steps.unwrap_or(1),
            ),
        ];
        for (field, value) in sizes {
            if value == 0 {
                return Err(AlgoError::InvalidConfig {
                    field: field.into(),
                    reason: "must be at least 1".into(),
                });
            }
        }
        if let Some(lora) = &self.lora {
            if lora.r == 0 {
                return Err(AlgoError::InvalidConfig {
                    field: "lora.r".into(),
                    reason: "the rank must be at least 1".into(),
                });
            }
            if lora.target_modules.is_empty() {
                return Err(AlgoError::InvalidConfig {
                    field: "lora.target_modules".into(),
                    reason: "name at least one projection (or all-linear)".into(),
                });
            }
        }
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            return Err(AlgoError::InvalidConfig {
                field: "beta".into(),
                reason: format!("must be a finite number ≥ 0, got {}", self.beta),
            });
        }
        Ok(())
    }
}
