//! Next-token cross-entropy summed over the loss tokens of a batch, with token accuracy.

use agent_rl_core::Qwen2ForCausalLm;
use burn::prelude::*;
use burn::tensor::activation::log_softmax;

use crate::sft::batch::SftBatch;

/// Summed cross-entropy of a batch and the counts needed to normalise it.
///
/// Trainers divide `loss_sum` by the number of loss tokens of the whole optimiser step (all
/// accumulated micro-batches), as Hugging Face's Trainer does with `num_items_in_batch`, so that
/// accumulating micro-batches gives the same update as one large batch.
#[derive(Debug, Clone)]
pub struct TokenLoss<B: Backend> {
    /// `[1]`: `−Σ log p(target)` over the loss tokens (differentiable on an autodiff backend).
    pub loss_sum: Tensor<B, 1>,
    /// Loss tokens in the batch.
    pub num_tokens: usize,
    /// Loss tokens whose argmax prediction equals the target.
    pub num_correct: usize,
}

/// Cross-entropy of predicting each loss token of `batch` with `model`.
pub fn token_loss<B: Backend>(model: &Qwen2ForCausalLm<B>, batch: &SftBatch) -> TokenLoss<B> {
    let logits = batch.forward(model);
    token_loss_from_logits(logits, batch)
}

/// Cross-entropy of `logits` (`[batch, seq, vocab]`, from [`SftBatch::forward`]) against the
/// batch's next tokens, summed over its loss targets.
///
/// # Shapes
/// - `logits`: `[batch, seq, vocab]`
pub fn token_loss_from_logits<B: Backend>(logits: Tensor<B, 3>, batch: &SftBatch) -> TokenLoss<B> {
    let device = logits.device();
    let [rows, seq, vocab] = logits.dims();
    let predicted = seq.saturating_sub(1);
    if rows == 0 || predicted == 0 {
        return TokenLoss {
            loss_sum: Tensor::zeros([1], &device),
            num_tokens: 0,
            num_correct: 0,
        };
    }
    let logits = logits.slice([0..rows, 0..predicted, 0..vocab]);
    let targets: Vec<i64> = batch
        .input_ids
        .iter()
        .flat_map(|row| row[1..].iter().map(|&id| i64::from(id)))
        .collect();
    let weights: Vec<f32> = batch
        .loss_targets
        .iter()
        .flatten()
        .map(|&t| if t { 1.0 } else { 0.0 })
        .collect();
    let targets_tensor = Tensor::<B, 2, Int>::from_data(
        TensorData::new(targets.clone(), [rows, predicted]),
        &device,
    );
    let weights_tensor =
        Tensor::<B, 2>::from_data(TensorData::new(weights, [rows, predicted]), &device);
    let argmax: Vec<i64> = logits
        .clone()
        .detach()
        .argmax(2)
        .into_data()
        .convert::<i64>()
        .into_vec::<i64>()
        .unwrap_or_default();
    let logp = log_softmax(logits, 2)
        .gather(2, targets_tensor.unsqueeze_dim::<3>(2))
        .squeeze_dim::<2>(2);
    let loss_sum = (logp * weights_tensor).sum().neg();
    let mask = batch.loss_targets.iter().flatten();
    let (mut num_tokens, mut num_correct) = (0, 0);
    for ((&target, &predicted_id), &counted) in targets.iter().zip(&argmax).zip(mask) {
        if counted {
            num_tokens += 1;
            num_correct += usize::from(target == predicted_id);
        }
    }
    TokenLoss {
        loss_sum,
        num_tokens,
        num_correct,
    }
}
