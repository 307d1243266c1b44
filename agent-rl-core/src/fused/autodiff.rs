//! The fused kernels as burn autodiff operations on Flex: each records one graph node whose
//! backward step is the matching hand-derived kernel in [`super::rows`], in place of the chain of
//! elementwise nodes (and their gradients) that the plain tensor-op versions record.

use burn::tensor::ops::FloatTensor;
use burn_autodiff::Autodiff;
use burn_autodiff::checkpoint::base::Checkpointer;
use burn_autodiff::checkpoint::strategy::NoCheckpointing;
use burn_autodiff::grads::Gradients;
use burn_autodiff::ops::{Backward, Ops, OpsKind};
use burn_flex::{Flex, FlexTensor};

use super::flex::{contiguous, from_values, shape_of, values};
use super::rows;

/// The training backend these operations are recorded on.
pub(super) type AutodiffFlex = Autodiff<Flex>;

/// A float tensor of [`AutodiffFlex`]: its Flex value and its graph node.
pub(super) type Tracked = FloatTensor<AutodiffFlex>;

/// Records `step` as the graph node that produced `out` from `parents`; `state` (what its
/// backward step needs) is only built when some parent wants a gradient.
pub(super) fn record<T: Backward<Flex, N>, const N: usize>(
    step: T,
    parents: [&Tracked; N],
    state: impl FnOnce() -> T::State,
    out: FlexTensor,
) -> Tracked {
    match step
        .prepare::<NoCheckpointing>(parents.map(|parent| parent.node.clone()))
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => prep.finish(state(), out),
        OpsKind::UnTracked(prep) => prep.finish(out),
    }
}

/// The gradient arriving at `ops`' output, contiguous.
pub(super) fn output_grad<S, const N: usize>(ops: &Ops<S, N>, grads: &mut Gradients) -> FlexTensor {
    contiguous(&grads.consume::<Flex>(&ops.node))
}

#[derive(Debug)]
struct SiluMulStep;

impl Backward<Flex, 2> for SiluMulStep {
    /// The contiguous gate and up inputs.
    type State = (FlexTensor, FlexTensor);

    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, _: &mut Checkpointer) {
        let d_out = output_grad(&ops, grads);
        let (gate, up) = ops.state;
        let (d_gate, d_up) = rows::silu_mul_backward(values(&gate), values(&up), values(&d_out));
        let shape = shape_of(&gate);
        let [gate_node, up_node] = ops.parents;
        if let Some(node) = gate_node {
            grads.register::<Flex>(node.id, from_values(shape.clone(), d_gate));
        }
        if let Some(node) = up_node {
            grads.register::<Flex>(node.id, from_values(shape, d_up));
        }
    }
}

/// `silu(gate) * up` as one graph node.
pub(super) fn silu_mul(gate: Tracked, up: Tracked) -> Tracked {
    let (gate_values, up_values) = (contiguous(&gate.primitive), contiguous(&up.primitive));
    let out = super::flex::silu_mul(&gate_values, &up_values);
    record(SiluMulStep, [&gate, &up], || (gate_values, up_values), out)
}

#[derive(Debug)]
struct RmsNormStep;

impl Backward<Flex, 2> for RmsNormStep {
    /// The contiguous input, the contiguous weight and each row's inverse RMS.
    type State = (FlexTensor, FlexTensor, Vec<f32>);

    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, _: &mut Checkpointer) {
        let d_out = output_grad(&ops, grads);
        let (x, weight, inv_rms) = ops.state;
        let (d_x, d_weight) =
            rows::rms_norm_backward(values(&x), values(&weight), &inv_rms, values(&d_out));
        let [x_node, weight_node] = ops.parents;
        if let Some(node) = x_node {
            grads.register::<Flex>(node.id, from_values(shape_of(&x), d_x));
        }
        if let Some(node) = weight_node {
            grads.register::<Flex>(node.id, from_values(shape_of(&weight), d_weight));
        }
    }
}

/// RMSNorm over the last dimension as one graph node.
pub(super) fn rms_norm(x: Tracked, weight: Tracked, eps: f32) -> Tracked {
    let (x_values, weight_values) = (contiguous(&x.primitive), contiguous(&weight.primitive));
    let (out, inv_rms) = super::flex::rms_norm(&x_values, &weight_values, eps);
    record(
        RmsNormStep,
        [&x, &weight],
        || (x_values, weight_values, inv_rms),
        out,
    )
}

#[derive(Debug)]
struct SoftmaxStep;

impl Backward<Flex, 1> for SoftmaxStep {
    /// The (contiguous) softmax output.
    type State = FlexTensor;

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let d_out = output_grad(&ops, grads);
        let y = ops.state;
        let shape = shape_of(&y);
        let width = shape[shape.num_dims() - 1];
        let d_x = rows::softmax_backward(values(&y), values(&d_out), width);
        let [x_node] = ops.parents;
        if let Some(node) = x_node {
            grads.register::<Flex>(node.id, from_values(shape, d_x));
        }
    }
}

/// Softmax over the last dimension of `x + bias` (a constant) as one graph node.
pub(super) fn softmax_last(x: Tracked, bias: Option<Tracked>) -> Tracked {
    let bias = bias.map(|bias| contiguous(&bias.primitive));
    let out = super::flex::softmax(&contiguous(&x.primitive), bias.as_ref());
    let saved = out.clone();
    record(SoftmaxStep, [&x], || saved, out)
}

/// What [`TokenScoresStep`] keeps: the contiguous logits, the targets, the scale, each row's
/// log-sum-exp and the forward's scores.
#[derive(Debug, Clone)]
struct ScoresState {
    logits: FlexTensor,
    targets: Vec<u32>,
    scale: f32,
    log_sum_exp: Vec<f32>,
    scores: FlexTensor,
}

#[derive(Debug)]
struct TokenScoresStep;

impl Backward<Flex, 1> for TokenScoresStep {
    type State = ScoresState;

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let d_out = output_grad(&ops, grads);
        let state = ops.state;
        let shape = shape_of(&state.logits);
        let input = rows::ScoreRows {
            logits: values(&state.logits),
            targets: &state.targets,
            width: shape[shape.num_dims() - 1],
            scale: state.scale,
        };
        let d_logits = input.backward(&state.log_sum_exp, values(&state.scores), values(&d_out));
        let [logits_node] = ops.parents;
        if let Some(node) = logits_node {
            grads.register::<Flex>(node.id, from_values(shape, d_logits));
        }
    }
}

/// `[..., 2]` target log-probability and entropy of each row of logits, as one graph node.
pub(super) fn token_scores(logits: Tracked, targets: Vec<u32>, scale: f32) -> Tracked {
    let logit_values = contiguous(&logits.primitive);
    let (scores, log_sum_exp) = super::flex::token_scores(&logit_values, &targets, scale);
    let saved = scores.clone();
    let state = || ScoresState {
        logits: logit_values,
        targets,
        scale,
        log_sum_exp,
        scores: saved,
    };
    record(TokenScoresStep, [&logits], state, scores)
}

#[derive(Debug)]
struct SwapMiddleStep;

impl Backward<Flex, 1> for SwapMiddleStep {
    /// The rotary tables (contiguous cosines and signed sines in the output layout), if any.
    type State = Option<(FlexTensor, FlexTensor)>;

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let d_out = output_grad(&ops, grads);
        let rope = ops.state.as_ref().map(|(cos, sin)| (cos, sin));
        let d_x = super::flex::swap_middle(&d_out, rope, true);
        let [x_node] = ops.parents;
        if let Some(node) = x_node {
            grads.register::<Flex>(node.id, d_x);
        }
    }
}

/// `[n, q, p, dim]` → `[n, p, q, dim]` with rows rotated by the constant `rope` tables, as one
/// graph node.
pub(super) fn swap_middle(x: Tracked, rope: Option<(Tracked, Tracked)>) -> Tracked {
    let rope = rope.map(|(cos, sin)| (contiguous(&cos.primitive), contiguous(&sin.primitive)));
    let out = super::flex::swap_middle(
        &contiguous(&x.primitive),
        rope.as_ref().map(|(cos, sin)| (cos, sin)),
        false,
    );
    record(SwapMiddleStep, [&x], || rope, out)
}
