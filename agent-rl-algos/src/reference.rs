//! Reference-model sync (TR-DPO style mix-up), generic over any burn module.

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::tensor::{Tensor, TensorPrimitive, backend::Backend};

use crate::error::{AlgoError, Result};

/// Collects float parameters in visit order.
struct Collect<B: Backend> {
    tensors: Vec<(Vec<usize>, TensorPrimitive<B>)>,
}

impl<B: Backend> ModuleVisitor<B> for Collect<B> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let tensor = param.val();
        self.tensors
            .push((tensor.dims().to_vec(), tensor.into_primitive()));
    }
}

/// Replaces each float parameter by `alpha·policy + (1 − alpha)·reference`, in visit order.
struct MixUp<B: Backend> {
    policy: std::vec::IntoIter<(Vec<usize>, TensorPrimitive<B>)>,
    alpha: f64,
}

impl<B: Backend> ModuleMapper<B> for MixUp<B> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
        let (id, reference, mapper) = param.consume();
        let mixed = match self.policy.next() {
            Some((_, policy)) => {
                let policy = Tensor::<B, D>::from_primitive(policy);
                (policy.mul_scalar(self.alpha) + reference.mul_scalar(1.0 - self.alpha)).detach()
            }
            None => reference, // unreachable: shapes were compared before mapping
        };
        Param::from_mapped_value(id, mixed, mapper)
    }
}

/// Moves the frozen reference model toward the policy: `ref ← α·policy + (1 − α)·ref` for every
/// float parameter (TRL's `sync_ref_model` with `ref_model_mixup_alpha`; `α = 1` copies the policy).
///
/// Parameters are matched in module order, as PyTorch's `zip(model.parameters(), ref.parameters())`,
/// so the two modules only need the same structure, not the same parameter ids. Pass the policy on
/// the reference's backend (`policy.valid()` for an autodiff policy).
///
/// # Errors
/// [`AlgoError::InvalidInput`] when `alpha` is outside [0, 1] or the modules' parameter lists differ
/// in length or shape (checked before anything is changed).
pub fn sync_reference_model<B: Backend, M: Module<B>>(
    reference: M,
    policy: &M,
    alpha: f32,
) -> Result<M> {
    if !(0.0..=1.0).contains(&alpha) {
        return Err(AlgoError::input(
            "alpha",
            format!("is {alpha}; must be in [0, 1]"),
        ));
    }
    let mut from_policy = Collect {
        tensors: Vec::new(),
    };
    policy.visit(&mut from_policy);
    let mut from_reference = Collect {
        tensors: Vec::new(),
    };
    reference.visit(&mut from_reference);
    if from_policy.tensors.len() != from_reference.tensors.len() {
        return Err(AlgoError::input(
            "policy",
            format!(
                "has {} float parameters, the reference {}; both must be the same architecture",
                from_policy.tensors.len(),
                from_reference.tensors.len()
            ),
        ));
    }
    for (i, ((p, _), (r, _))) in from_policy
        .tensors
        .iter()
        .zip(&from_reference.tensors)
        .enumerate()
    {
        if p != r {
            return Err(AlgoError::ShapeMismatch {
                name: format!("parameter #{i}"),
                expected: r.clone(),
                found: p.clone(),
            });
        }
    }
    drop(from_reference);
    Ok(reference.map(&mut MixUp {
        policy: from_policy.tensors.into_iter(),
        alpha: f64::from(alpha),
    }))
}
