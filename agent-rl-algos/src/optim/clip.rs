//! Gradient clipping by the global L2 norm over all parameters (PyTorch's `clip_grad_norm_`).

use burn::module::{AutodiffModule, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};

/// PyTorch's guard against division by zero in `clip_grad_norm_`.
const NORM_EPSILON: f64 = 1e-6;

/// Elements from which burn-flex's `sum` of a whole tensor runs on rayon's pool (its
/// `sum_f32_contiguous`): chunk sums combined in a tree whose shape follows work stealing, so
/// the last bits of the total change from run to run — and with them the clipping coefficient
/// and every update after it. Every matrix of a real model's embedding, and its MLP matrices
/// from Qwen2.5-0.5B up, is this large.
const PARALLEL_SUM_ELEMENTS: usize = 4 * 1024 * 1024;

/// Row length of the fixed-order sum of larger gradients.
const SUM_ROW: usize = 64 * 1024;

/// The sum of the squares of `grad`, in an order that does not depend on thread scheduling:
/// below [`PARALLEL_SUM_ELEMENTS`] one `sum` (a single pass on every CPU backend); from there,
/// rows of [`SUM_ROW`] elements summed along the row (each row in one pass), then the row sums,
/// then the tail that does not fill a row.
fn squared_sum<I: Backend, const D: usize>(grad: Tensor<I, D>) -> Tensor<I, 1> {
    let count = grad.shape().num_elements();
    let squares = grad.powi_scalar(2).reshape([count]);
    if count < PARALLEL_SUM_ELEMENTS {
        return squares.sum();
    }
    let rows = count / SUM_ROW;
    let full = squares
        .clone()
        .narrow(0, 0, rows * SUM_ROW)
        .reshape([rows, SUM_ROW])
        .sum_dim(1)
        .sum();
    if rows * SUM_ROW == count {
        full
    } else {
        full + squares
            .narrow(0, rows * SUM_ROW, count - rows * SUM_ROW)
            .sum()
    }
}

struct SquaredNorm<'a, I: Backend> {
    grads: &'a GradientsParams,
    total: Option<Tensor<I, 1>>,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for SquaredNorm<'_, B::InnerBackend> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        if let Some(grad) = self.grads.get::<B::InnerBackend, D>(param.id) {
            let squares = squared_sum(grad);
            self.total = Some(match self.total.take() {
                Some(total) => total + squares,
                None => squares,
            });
        }
    }
}

struct Scale<'a> {
    grads: &'a mut GradientsParams,
    factor: f64,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for Scale<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        if let Some(grad) = self.grads.remove::<B::InnerBackend, D>(param.id) {
            self.grads
                .register::<B::InnerBackend, D>(param.id, grad.mul_scalar(self.factor));
        }
    }
}

/// Scales all gradients of `module` so that their global L2 norm is at most `max_norm`, and
/// returns the norm before clipping (what TRL logs as `grad_norm`).
///
/// Like PyTorch: `coef = max_norm / (norm + 1e-6)`, applied only when below 1. burn's own
/// `GradientClipping::Norm` clips each parameter tensor separately, which is a different update.
/// A non-finite norm leaves the gradients unchanged; the caller should then skip the step.
/// The norm's bits do not depend on how threads are scheduled (large gradients are summed in a
/// fixed order), so a run repeats itself exactly.
pub fn clip_grad_norm<B: AutodiffBackend, M: AutodiffModule<B>>(
    module: &M,
    mut grads: GradientsParams,
    max_norm: f32,
) -> (GradientsParams, f32) {
    let mut visitor = SquaredNorm::<B::InnerBackend> {
        grads: &grads,
        total: None,
    };
    module.visit(&mut visitor);
    let Some(total) = visitor.total else {
        return (grads, 0.0);
    };
    let norm = total
        .into_data()
        .iter::<f64>()
        .next()
        .unwrap_or(f64::NAN)
        .sqrt();
    let coef = f64::from(max_norm) / (norm + NORM_EPSILON);
    if norm.is_finite() && coef < 1.0 {
        module.visit(&mut Scale {
            grads: &mut grads,
            factor: coef,
        });
    }
    (grads, norm as f32)
}
