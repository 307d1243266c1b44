//! One optimiser step as every trainer takes it: global-norm clipping, then AdamW at the
//! scheduled learning rate, skipped when the norm is not finite (as TRL does).

use burn::module::AutodiffModule;
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{AdamW, GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;

use crate::optim::clip_grad_norm;

/// Clips `grads` to `max_grad_norm` (`None` = no clipping) and takes the AdamW step at
/// `learning_rate`; returns the (possibly unchanged) model and the norm before clipping. A
/// non-finite norm leaves the model as it was.
pub fn clipped_adamw_step<B: AutodiffBackend, M: AutodiffModule<B>>(
    optimizer: &mut OptimizerAdaptor<AdamW, M, B>,
    model: M,
    grads: GradientsParams,
    max_grad_norm: Option<f32>,
    learning_rate: f64,
) -> (M, f32) {
    let (grads, norm) = clip_grad_norm(&model, grads, max_grad_norm.unwrap_or(f32::INFINITY));
    if !norm.is_finite() {
        return (model, norm);
    }
    (optimizer.step(learning_rate, model, grads), norm)
}
