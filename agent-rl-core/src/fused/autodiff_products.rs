//! The [`super::products`] as autodiff operations on Flex, with their backward products.

use burn_autodiff::NodeId;
use burn_autodiff::checkpoint::base::Checkpointer;
use burn_autodiff::grads::Gradients;
use burn_autodiff::ops::{Backward, Ops};
use burn_flex::{Flex, FlexTensor};

use super::autodiff::{Tracked, output_grad, record};
use super::products::{batched_matmul, column_sums, linear as linear_values, viewable};

/// The ids of the parents that want a gradient.
fn wanted<S, const N: usize>(ops: &Ops<S, N>) -> [Option<NodeId>; N] {
    ops.parents
        .each_ref()
        .map(|parent| parent.as_ref().map(|node| node.id))
}

/// Registers the gradients of `a · b` (`a`, `b` as saved) for the parents that want them.
fn product_grads(
    [a_id, b_id]: [Option<NodeId>; 2],
    (a, b): &(FlexTensor, FlexTensor),
    d_out: &FlexTensor,
    grads: &mut Gradients,
) {
    if let Some(id) = a_id {
        grads.register::<Flex>(id, batched_matmul(d_out, b, false, true));
    }
    if let Some(id) = b_id {
        grads.register::<Flex>(id, batched_matmul(a, d_out, true, false));
    }
}

/// A matrix product (plain or batched); the state is both (viewable) operands.
#[derive(Debug)]
struct ProductStep;

impl Backward<Flex, 2> for ProductStep {
    type State = (FlexTensor, FlexTensor);

    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, _: &mut Checkpointer) {
        let d_out = output_grad(&ops, grads);
        product_grads(wanted(&ops), &ops.state, &d_out, grads);
    }
}

/// A linear layer with a bias; the state is the input and the weight.
#[derive(Debug)]
struct BiasedLinearStep;

impl Backward<Flex, 3> for BiasedLinearStep {
    type State = (FlexTensor, FlexTensor);

    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let d_out = output_grad(&ops, grads);
        let [x_id, weight_id, bias_id] = wanted(&ops);
        product_grads([x_id, weight_id], &ops.state, &d_out, grads);
        if let Some(id) = bias_id {
            grads.register::<Flex>(id, column_sums(&d_out));
        }
    }
}

/// `x · weight (+ bias)` (`[tokens, in]`, `[in, out]`, `[out]`) as one graph node.
pub(super) fn linear(x: Tracked, weight: Tracked, bias: Option<Tracked>) -> Tracked {
    let (x_values, w_values) = (viewable(&x.primitive), viewable(&weight.primitive));
    let b_values = bias.as_ref().map(|bias| viewable(&bias.primitive));
    let out = linear_values(&x_values, &w_values, b_values.as_ref());
    let state = || (x_values, w_values);
    match &bias {
        Some(bias) => record(BiasedLinearStep, [&x, &weight, bias], state, out),
        None => record(ProductStep, [&x, &weight], state, out),
    }
}

/// `a · b` per matrix over equal leading dimensions, as one graph node.
pub(super) fn matmul(a: Tracked, b: Tracked) -> Tracked {
    let (a_values, b_values) = (viewable(&a.primitive), viewable(&b.primitive));
    let out = batched_matmul(&a_values, &b_values, false, false);
    record(ProductStep, [&a, &b], || (a_values, b_values), out)
}
