//! The estimate: what each part of a training step keeps in memory, and the peak.
//!
//! Sizes are in elements times bytes per element. `a` is the activation type's size: 4 (f32),
//! or 2 when full fine-tuning runs the whole backend in half precision (`--dtype bf16` without
//! LoRA). Frozen half-precision weights under LoRA are cast to f32 per use, so activations,
//! adapters, their gradients and AdamW moments stay f32.
//!
//! **Persistent.** `weights = P × w` (`P` parameters, `w` the weight type's bytes) plus, under
//! LoRA, `P_lora × 4`; `optimizer = 2 × P_train × t` (AdamW's two moments; `P_train` = `P` or
//! the LoRA parameters, `t` = 4 under LoRA, `w` in full fine-tuning); `reference = P × w` for
//! GRPO with `β > 0` in full fine-tuning (the trainer keeps a frozen copy), 0 under LoRA (the
//! reference is the base with the adapters switched off) and for SFT.
//!
//! **Training phase** (one micro-batch of `b` sequences at a time). `gradients = P_train × t`,
//! twice that with gradient accumulation (the summed gradients beside the new micro-batch's).
//! Activations follow what agent-rl-core's model records for the backward pass, per decoder
//! layer and token (fused CPU kernels; the tensor-op path on other backends keeps the same
//! tensors): the layer input (kept by the first RMSNorm), the normed input (by the q/k/v
//! product), the queries (by the score product), the attention context (by `o_proj`), the
//! residual after attention and its norm (by the second RMSNorm and gate/up), the gate and up
//! projections (by SiLU·up) and their product (by `down_proj`): `6H + 3I` values; the softmax
//! output `heads × T` (`T` positions attended, kept by softmax and by the product with the
//! values); the keys and values `2 × kv_heads × head_dim` per attended position; `r` per adapted
//! projection under LoRA (the `x·A` product kept for `B`). A frozen half weight keeps only
//! itself for backward: its f32 copy exists one block (4M values) at a time, during one product.
//! The final norm's input and the gradient flowing back into the layers add `2H` per position.
//!
//! The backward pass of one layer adds its working set, the larger of its two phases (read from
//! the live allocations at `bench_memory`'s peaks, by size): the MLP goes first,
//! and at its SiLU·up step the gradient of the layer's output (`H`) and the gradients of the
//! product, gate and up (`3I`) exist while the product is already freed, `H + 2I` net (a half
//! weight's f32 block instead of one `I` the step before, when that is larger); then attention,
//! with the MLP's `3I` freed: the gradients of the probabilities and of the scores
//! (`2 × heads × T`) and two hidden-wide gradients. With gradient checkpointing each layer keeps
//! only its input (`H` per token) and one layer is recomputed at a time: its activations as
//! above, its working set, and the pass's additive attention mask (`heads × T` per token,
//! `[rows, heads, new, T]`), which the checkpointed layers build once and keep for every
//! recomputation.
//!
//! GRPO with a reference (`β > 0`) scores every micro-batch with the reference on one thread
//! while the policy runs the first micro-batch's forward pass on another; the reference's
//! forward (no graph, the shared-prompt passes below) then holds, beside everything the policy's
//! pass keeps and the policy pass's own attention mask (alive until that pass ends; with one
//! micro-batch both passes run side by side), at its last layer's SiLU·up product: four
//! hidden-wide tensors per token (the residual stream and its norm, as measured), gate, up and
//! their product (`3I`), its pass's attention mask, and every layer's keys and values. The
//! activation component is what is kept plus the larger of this and the backward working set.
//!
//! The planner counts attention over the whole score matrix, as burn's tensor ops on the GPU
//! backends run it. On the CPU (Flex) a pass of at least 65,536 scores per head takes a blocked
//! kernel that stores neither the probabilities nor the mask, so there the estimate of such
//! passes is high (the SFT cases of `bench_memory`).
//!
//! GRPO scores a micro-batch as agent-rl-core's `token_scores` does: each distinct prompt once
//! (`u = ⌈b / K⌉` rows of `max_prompt_length` tokens), then the completions of all `b` rows
//! attending to their prompt through the key/value cache (`max_completion_length − 1` new
//! tokens); with gradient checkpointing, as `token_scores_checkpointed` does, every row runs its
//! whole `max_prompt_length + max_completion_length − 1` tokens (no shared prompt). Logits exist
//! only for the completion positions: the fused scoring kernel keeps them (`b × C × V`) and the
//! backward pass makes their gradient, `logits = 2 × b × C × V × a`. SFT runs the whole
//! `max_prompt_length + max_completion_length` sequence and takes burn's `log_softmax` over every
//! position: at its last subtraction `x − max`, `exp(x − max)` (kept for backward) and the result
//! are alive together, and its backward pass needs as many vocabulary-wide tensors:
//! `logits = 3 × b × S × V × a`.
//!
//! **Rollout phase** (GRPO). `rollout_kv_cache = L × N × (prompt + completion) × 2 × kv_heads ×
//! head_dim × a` for the `N = prompts × K` sequences decoded together, plus one row of logits
//! per sequence. On the CPU the key/value cache grows by doubling, so up to twice this figure
//! can be reserved there.
//!
//! **Peak.** Gradients and activations do not peak together: the backward pass frees each
//! layer's activations as it makes that layer's gradients. In the backward pass everything above
//! is alive plus the first gradient made (`lm_head`'s, or the tied embedding's, `V × H × t`, in
//! full fine-tuning) and, with accumulation, the gradients summed so far; while the reference
//! scores (before the first backward pass) no gradient exists yet; at the backward pass's end
//! all gradients are alive and the optimiser step adds, one tensor at a time, a new weight and
//! two new moments (three times the largest trainable tensor). Rollouts come before all these.
//! So `total = weights + optimizer + reference + max(kept + logits + max(backward working +
//! first gradient + accumulated gradients, reference scoring), gradients + optimiser step,
//! rollout_kv_cache)`.

use serde::{Deserialize, Serialize};

use super::request::{MemoryPlanRequest, TargetModule, TrainMethod, WeightDtype};
use super::shape::ModelShape;
use crate::error::{AlgoError, Result};

/// The planner counts in 128 bits: [`MemoryPlanRequest::validate`] bounds every size so that no
/// product overflows here, and each component is checked when narrowed to `u64` bytes.
type Wide = u128;

/// Bytes per component (see the module docs for each formula).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryBreakdown {
    /// Model weights (base and adapters).
    pub weights: u64,
    /// Gradients of the trainable parameters (training phase).
    pub gradients: u64,
    /// AdamW moments of the trainable parameters.
    pub optimizer: u64,
    /// The frozen KL reference model (0 under LoRA, for SFT, or with `β = 0`).
    pub reference: u64,
    /// Activations kept for the backward pass of one micro-batch, with its working set.
    pub activations: u64,
    /// Logits of one micro-batch and their gradient.
    pub logits: u64,
    /// Key/value cache of the rollouts (GRPO).
    pub rollout_kv_cache: u64,
}

/// [`MemoryBreakdown`] before it is checked to fit `u64` bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Components {
    /// Model weights (base and adapters).
    weights: Wide,
    /// Gradients of the trainable parameters (training phase).
    gradients: Wide,
    /// AdamW moments of the trainable parameters.
    optimizer: Wide,
    /// The frozen KL reference model (0 under LoRA, for SFT, or with `β = 0`).
    reference: Wide,
    /// Activations kept for the backward pass of one micro-batch, with its working set.
    activations: Wide,
    /// Logits of one micro-batch and their gradient.
    logits: Wide,
    /// Key/value cache of the rollouts (GRPO).
    rollout_kv_cache: Wide,
}

impl Components {
    /// The components as `u64` bytes.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] naming the component whose estimate does not fit.
    fn narrow(self) -> Result<MemoryBreakdown> {
        Ok(MemoryBreakdown {
            weights: narrow("weights", self.weights)?,
            gradients: narrow("gradients", self.gradients)?,
            optimizer: narrow("optimizer", self.optimizer)?,
            reference: narrow("reference", self.reference)?,
            activations: narrow("activations", self.activations)?,
            logits: narrow("logits", self.logits)?,
            rollout_kv_cache: narrow("rollout_kv_cache", self.rollout_kv_cache)?,
        })
    }
}

/// `bytes` as `u64`, or an error naming `component`.
fn narrow(component: &str, bytes: Wide) -> Result<u64> {
    u64::try_from(bytes).map_err(|_| AlgoError::InvalidConfig {
        field: format!("breakdown.{component}"),
        reason: format!(
            "the estimate, {bytes} bytes, is beyond 2^64 bytes: lower the sequences per step \
             (prompts_per_step × num_generations, batch_size) or the lengths"
        ),
    })
}

/// What the peak needs besides the components (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
struct Transients {
    /// The micro-batch's activations at each moment.
    activations: Activations,
    /// The gradient made first in the backward pass (`lm_head` / tied embedding).
    first_gradient: Wide,
    /// Gradients summed over earlier micro-batches, alive during a later backward pass.
    accumulated: Wide,
    /// A new weight and two new moments of the largest trainable tensor.
    optimizer_step: Wide,
}

/// The peak: persistent parts plus the largest of the reference scoring beside the first
/// forward pass, the backward pass, the backward end with the optimiser step, and the rollouts.
fn peak(breakdown: &Components, transients: Transients) -> Wide {
    let activations = transients.activations;
    let scoring = if activations.scoring > 0 {
        activations.kept + activations.scoring + breakdown.logits
    } else {
        0
    };
    let backward = activations.kept
        + activations.backward
        + breakdown.logits
        + transients.first_gradient
        + transients.accumulated;
    let backward_end = breakdown.gradients + transients.optimizer_step;
    breakdown.weights
        + breakdown.optimizer
        + breakdown.reference
        + scoring
            .max(backward)
            .max(backward_end)
            .max(breakdown.rollout_kv_cache)
}

/// The planner's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryPlan {
    /// Peak bytes (see the module docs: the components overlap only in part).
    pub total_bytes: u64,
    /// Whether `total_bytes` fits the device memory; `None` when none was given.
    pub fits: Option<bool>,
    /// The device memory checked against.
    pub device_memory: Option<u64>,
    /// Bytes per component.
    pub breakdown: MemoryBreakdown,
    /// Parameters of the model.
    pub parameters: u64,
    /// Parameters that are trained (all, or the LoRA adapters).
    pub trainable_parameters: u64,
    /// Sequences per micro-batch.
    pub micro_batch_size: usize,
    /// Micro-batches per optimiser step (chosen to fit when the request left it open).
    pub gradient_accumulation_steps: usize,
}

/// One forward pass over `rows` sequences of `new` tokens attending to `attended` positions
/// (the earlier ones from a key/value cache).
#[derive(Debug, Clone, Copy)]
struct Pass {
    rows: Wide,
    new: Wide,
    attended: Wide,
}

impl Pass {
    fn tokens(self) -> Wide {
        self.rows * self.new
    }
}

/// The forward passes of one micro-batch of `b` sequences; GRPO runs each distinct prompt once
/// when `shared` (`token_scores`, `token_logprobs`), every row in full otherwise
/// (`token_scores_checkpointed`).
fn passes(request: &MemoryPlanRequest, b: Wide, shared: bool) -> Vec<Pass> {
    let prompt = request.max_prompt_length as Wide;
    let completion = request.max_completion_length as Wide;
    match request.method {
        TrainMethod::Sft => {
            let len = prompt + completion;
            vec![Pass {
                rows: b,
                new: len,
                attended: len,
            }]
        }
        TrainMethod::Grpo => {
            let k = request.num_generations as Wide;
            let unique = b.div_ceil(k).max(1);
            if shared && b >= 2 && unique < b && prompt > 0 {
                let new = completion - 1;
                vec![
                    Pass {
                        rows: unique,
                        new: prompt,
                        attended: prompt,
                    },
                    Pass {
                        rows: b,
                        new,
                        attended: prompt + new,
                    },
                ]
            } else {
                let len = prompt + completion - 1;
                vec![Pass {
                    rows: b,
                    new: len,
                    attended: len,
                }]
            }
        }
    }
}

/// Values of a frozen half-precision weight widened to f32 at once (agent-rl-core's
/// `half_linear` block).
const HALF_CAST_BLOCK: Wide = 1 << 22;

/// Activation type bytes (see the module docs).
fn activation_bytes(request: &MemoryPlanRequest) -> Wide {
    if request.lora.is_none() {
        Wide::from(request.weight_dtype.bytes())
    } else {
        4
    }
}

/// Elements one decoder layer keeps for backward in `pass` (no checkpointing).
fn layer_elements(shape: &ModelShape, pass: Pass, lora_per_token: Wide) -> Wide {
    let (hidden, inter) = (shape.hidden as Wide, shape.intermediate as Wide);
    let kv_width = 2 * (shape.kv_heads * shape.head_dim) as Wide;
    pass.tokens() * (6 * hidden + 3 * inter + shape.heads as Wide * pass.attended + lora_per_token)
        + pass.rows * pass.attended * kv_width
}

/// Elements of `pass`'s additive attention mask (`[rows, heads, new, attended]`), built once per
/// pass and shared by its layers.
fn mask_elements(shape: &ModelShape, pass: Pass) -> Wide {
    pass.tokens() * shape.heads as Wide * pass.attended
}

/// Elements one layer's backward pass adds in `pass`, at the larger of its two phases. The MLP
/// goes first: at the SiLU·up step the layer output's gradient (`H`) and the gradients of the
/// product, gate and up (`3I`) exist while the product itself is already freed (net `H + 2I`;
/// one step earlier, `down_proj`'s, has `H + I` and a half weight's f32 block). Then attention,
/// with the MLP's `3I` freed: the gradients of the probabilities and scores (`2 × heads × T`) and
/// two hidden-wide gradients.
fn backward_elements(shape: &ModelShape, pass: Pass, cast: Wide) -> Wide {
    let (hidden, inter) = (shape.hidden as Wide, shape.intermediate as Wide);
    let tokens = pass.tokens();
    let mlp = tokens * (hidden + inter) + (tokens * inter).max(cast);
    let attention = (tokens * (2 * shape.heads as Wide * pass.attended + 2 * hidden))
        .saturating_sub(tokens * 3 * inter);
    mlp.max(attention)
}

/// Elements a forward pass without a graph (the reference scoring a micro-batch) holds at its
/// peak in `pass`, the last layer's SiLU·up product (as measured): four hidden-wide tensors (the
/// residual stream before and after attention, its norm, the caller's hidden state), gate, up
/// and their product (`3I`, or gate, up and a half weight's f32 block during their product), the
/// pass's attention mask, and every layer's keys and values.
fn scoring_elements(shape: &ModelShape, pass: Pass, cast: Wide) -> Wide {
    let (hidden, inter) = (shape.hidden as Wide, shape.intermediate as Wide);
    let kv_width = 2 * (shape.kv_heads * shape.head_dim) as Wide;
    let tokens = pass.tokens();
    tokens * (4 * hidden + 2 * inter)
        + (tokens * inter).max(cast)
        + mask_elements(shape, pass)
        + shape.layers as Wide * pass.rows * pass.attended * kv_width
}

/// Activation bytes of one micro-batch at the training phase's two possible peaks.
#[derive(Debug, Clone, Copy, Default)]
struct Activations {
    /// Kept from the forward pass until the backward pass frees them (with the final norm's).
    kept: Wide,
    /// Added during the backward pass of the layer where it peaks.
    backward: Wide,
    /// Added while the reference scores the micro-batches beside the policy's forward pass of
    /// the first one (GRPO with `β > 0`; 0 otherwise).
    scoring: Wide,
}

impl Activations {
    /// The larger of the two moments (the `activations` component).
    fn peak(self) -> Wide {
        self.kept + self.backward.max(self.scoring)
    }
}

/// Activation bytes of one micro-batch of `b` sequences.
fn activations(request: &MemoryPlanRequest, shape: &ModelShape, b: Wide) -> Activations {
    let a = activation_bytes(request);
    let layers = shape.layers as Wide;
    let hidden = shape.hidden as Wide;
    let lora_per_token = request
        .lora
        .as_ref()
        .map_or(0, |lora| (lora.r * lora.target_modules.len()) as Wide);
    // A frozen half weight keeps only itself for backward; the f32 copy exists one block of
    // `HALF_CAST_BLOCK` values at a time, during one product.
    let cast = match (&request.lora, request.weight_dtype) {
        (Some(_), WeightDtype::Bf16 | WeightDtype::F16) => {
            Wide::from(shape.layer_parameters()).min(HALF_CAST_BLOCK)
        }
        _ => 0,
    };
    let all = passes(request, b, !request.gradient_checkpointing);
    let layer: Wide = all
        .iter()
        .map(|&pass| layer_elements(shape, pass, lora_per_token))
        .sum();
    let working = all
        .iter()
        .map(|&pass| backward_elements(shape, pass, cast))
        .max()
        .unwrap_or(0);
    let tokens: Wide = all.iter().map(|pass| pass.tokens()).sum();
    let head = 2 * hidden * tokens;
    let (kept, backward) = if request.gradient_checkpointing {
        // Each layer's input; one layer recomputed at a time, its passes' masks kept by the
        // checkpointed layers for every recomputation.
        let inputs: Wide = all.iter().map(|pass| pass.tokens() * hidden).sum();
        let masks: Wide = all.iter().map(|&pass| mask_elements(shape, pass)).sum();
        (layers * inputs + head, layer + masks + working)
    } else {
        (layers * layer + head, working)
    };
    // The reference scores with `token_logprobs` (the shared-prompt passes, no graph) while the
    // policy's forward pass runs, its mask alive until the pass ends.
    let scoring = if request.method == TrainMethod::Grpo && request.beta > 0.0 {
        let reference = passes(request, b, true)
            .iter()
            .map(|&pass| scoring_elements(shape, pass, cast))
            .max()
            .unwrap_or(0);
        let policy_mask = all
            .iter()
            .map(|&pass| mask_elements(shape, pass))
            .max()
            .unwrap_or(0);
        reference + policy_mask
    } else {
        0
    };
    Activations {
        kept: kept * a,
        backward: backward * a,
        scoring: scoring * a,
    }
}

/// Logit bytes of one micro-batch of `b` sequences.
fn logits(request: &MemoryPlanRequest, shape: &ModelShape, b: Wide) -> Wide {
    let a = activation_bytes(request);
    let vocab = shape.vocab as Wide;
    match request.method {
        TrainMethod::Grpo => 2 * b * request.max_completion_length as Wide * vocab * a,
        TrainMethod::Sft => {
            let len = (request.max_prompt_length + request.max_completion_length) as Wide;
            3 * b * len * vocab * a
        }
    }
}

/// The breakdown for `accumulation` micro-batches per optimiser step, with the micro-batch size
/// and the peak.
fn breakdown(
    request: &MemoryPlanRequest,
    shape: &ModelShape,
    accumulation: usize,
) -> (Components, usize, Wide) {
    let parameters = Wide::from(shape.parameters());
    let w = Wide::from(request.weight_dtype.bytes());
    let (trainable, t) = match &request.lora {
        Some(lora) => (
            Wide::from(shape.lora_parameters(lora.r, &lora.target_modules)),
            4,
        ),
        None => (parameters, w),
    };
    let adapters = if request.lora.is_some() {
        trainable * 4
    } else {
        0
    };
    let sequences = match request.method {
        TrainMethod::Sft => request.batch_size * accumulation,
        TrainMethod::Grpo => request.prompts_per_step * request.num_generations,
    };
    let chunks = accumulation.min(sequences).max(1);
    let micro = match request.method {
        TrainMethod::Sft => request.batch_size,
        TrainMethod::Grpo => sequences.div_ceil(chunks),
    };
    let b = micro as Wide;
    let reference = match (request.method, &request.lora) {
        (TrainMethod::Grpo, None) if request.beta > 0.0 => parameters * w,
        _ => 0,
    };
    let rollout_kv_cache = match request.method {
        TrainMethod::Sft => 0,
        TrainMethod::Grpo => {
            let a = activation_bytes(request);
            let positions = (request.max_prompt_length + request.max_completion_length) as Wide;
            let kv_width = 2 * (shape.kv_heads * shape.head_dim) as Wide;
            let rows = sequences as Wide;
            (shape.layers as Wide * rows * positions * kv_width + rows * shape.vocab as Wide) * a
        }
    };
    let largest = match &request.lora {
        Some(lora) => lora
            .target_modules
            .iter()
            .map(|&module| {
                let (input, output) = shape.projection(module);
                (lora.r * input.max(output)) as Wide
            })
            .max()
            .unwrap_or(0),
        None => {
            let projection = TargetModule::ALL
                .iter()
                .map(|&module| {
                    let (input, output) = shape.projection(module);
                    (input * output) as Wide
                })
                .max()
                .unwrap_or(0);
            projection.max((shape.vocab * shape.hidden) as Wide)
        }
    };
    let accumulated = if chunks > 1 { trainable * t } else { 0 };
    let activations = activations(request, shape, b);
    let transients = Transients {
        activations,
        first_gradient: if request.lora.is_none() {
            (shape.vocab * shape.hidden) as Wide * t
        } else {
            0
        },
        accumulated,
        optimizer_step: 3 * largest * t,
    };
    let breakdown = Components {
        weights: parameters * w + adapters,
        gradients: trainable * t + accumulated,
        optimizer: 2 * trainable * t,
        reference,
        activations: activations.peak(),
        logits: logits(request, shape, b),
        rollout_kv_cache,
    };
    (breakdown, micro, peak(&breakdown, transients))
}

/// The fewest micro-batches per step (of `sequences`) whose peak fits `memory`, or `sequences`
/// when none does. The peak depends on the count only through the micro-batch size (and
/// whether there is more than one), so only the smallest count giving each distinct size is
/// tried: at most about `2 × √sequences` estimates.
fn fewest_fitting_micro_batches(
    request: &MemoryPlanRequest,
    shape: &ModelShape,
    sequences: usize,
    memory: u64,
) -> usize {
    let mut steps = 1;
    while steps < sequences {
        if breakdown(request, shape, steps).2 <= Wide::from(memory) {
            return steps;
        }
        let micro = sequences.div_ceil(steps);
        // the fewest micro-batches with a smaller micro-batch size
        steps = sequences.div_ceil(micro - 1);
    }
    sequences
}

/// Plans the memory of `request` (see the module docs for the formulas). When
/// `gradient_accumulation_steps` is `None`, GRPO takes the fewest micro-batches per step whose
/// peak fits `device_memory` (one when no device is given, as the trainer's default; one
/// sequence per micro-batch when nothing fits); SFT takes 1.
///
/// # Errors
/// [`crate::AlgoError::InvalidConfig`] from [`MemoryPlanRequest::validate`], or naming the
/// component whose estimate is beyond `u64` bytes.
pub fn plan_memory(request: &MemoryPlanRequest) -> Result<MemoryPlan> {
    request.validate()?;
    let shape = ModelShape::of(&request.model);
    let sequences = request.prompts_per_step * request.num_generations;
    let accumulation = match (request.gradient_accumulation_steps, request.method) {
        (Some(steps), _) => steps,
        (None, TrainMethod::Sft) => 1,
        (None, TrainMethod::Grpo) => match request.device_memory {
            None => 1,
            Some(memory) => fewest_fitting_micro_batches(request, &shape, sequences, memory),
        },
    };
    let (components, micro_batch_size, total) = breakdown(request, &shape, accumulation);
    let breakdown = components.narrow()?;
    let total_bytes = narrow("total", total)?;
    let parameters = shape.parameters();
    Ok(MemoryPlan {
        total_bytes,
        fits: request.device_memory.map(|memory| total_bytes <= memory),
        device_memory: request.device_memory,
        breakdown,
        parameters,
        trainable_parameters: match &request.lora {
            Some(lora) => shape.lora_parameters(lora.r, &lora.target_modules),
            None => parameters,
        },
        micro_batch_size,
        gradient_accumulation_steps: accumulation,
    })
}
