//! Gradient clipping by the global L2 norm over all parameters (PyTorch's `clip_grad_norm_`).

use burn::module::{AutodiffModule, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};

/// PyTorch's guard against division by zero in `clip_grad_norm_`.
const NORM_EPSILON: f64 = 1e-6;

struct SquaredNorm<'a, I: Backend> {
    grads: &'a GradientsParams,
    total: Option<Tensor<I, 1>>,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for SquaredNorm<'_, B::InnerBackend> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        if let Some(grad) = self.grads.get::<B::InnerBackend, D>(param.id) {
            let squares = grad.powi_scalar(2).sum();
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
