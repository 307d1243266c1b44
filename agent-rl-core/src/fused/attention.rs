//! [`super::flash`] attention on burn Flex tensors, and as one `Autodiff<Flex>` graph node that
//! keeps the inputs, the output and each row's log-sum-exp (`O(seq)` memory, not the
//! `O(seq * total)` probabilities).

use std::sync::Arc;

use burn::tensor::Shape;
use burn_autodiff::checkpoint::base::Checkpointer;
use burn_autodiff::grads::Gradients;
use burn_autodiff::ops::{Backward, Ops};
use burn_flex::{Flex, FlexTensor};

use super::autodiff::{Tracked, output_grad, record};
use super::flash::{Attention, Dims, Grads, HeadRows, Saved};
use super::flex::{from_values, shape_of, values};
use crate::model::AttentionMask;

/// `x` (`[batch, heads, len, dim]`) itself when its rows are stored `dim` apart with
/// non-negative strides (a KV cache with spare room included), else a contiguous copy.
pub(super) fn head_rows_tensor(x: &FlexTensor) -> FlexTensor {
    let layout = x.layout();
    let (shape, strides) = (layout.shape(), layout.strides());
    let rows_packed = (shape[3] <= 1 || strides[3] == 1)
        && (shape[2] <= 1 || strides[2] == shape[3] as isize)
        && strides[..2].iter().all(|&s| s >= 0);
    if rows_packed {
        x.clone()
    } else {
        x.to_contiguous()
    }
}

/// The [`HeadRows`] view of a tensor made by [`head_rows_tensor`].
fn head_rows(x: &FlexTensor) -> HeadRows<'_> {
    let layout = x.layout();
    let strides = layout.strides();
    HeadRows {
        data: x.storage::<f32>(),
        start: layout.start_offset(),
        batch_stride: strides[0] as usize,
        head_stride: strides[1] as usize,
    }
}

/// The sizes of an attention call on `queries` `[batch, heads, seq, dim]` and `keys`
/// `[batch, kv_heads, total, dim]`.
fn dims(queries: &FlexTensor, keys: &FlexTensor) -> Dims {
    let (q, k) = (shape_of(queries), shape_of(keys));
    Dims {
        batch: q[0],
        heads: q[1],
        kv_heads: k[1],
        seq: q[2],
        total: k[2],
        dim: q[3],
    }
}

/// The inputs of one call, as the kernel reads them (tensors from [`head_rows_tensor`]).
fn inputs<'a>(
    (queries, keys, values): (&'a FlexTensor, &'a FlexTensor, &'a FlexTensor),
    mask: &'a AttentionMask,
) -> Attention<'a> {
    Attention {
        queries: head_rows(queries),
        keys: head_rows(keys),
        values: head_rows(values),
        mask,
        dims: dims(queries, keys),
    }
}

/// `[batch, seq, heads * dim]` attention output and `[batch, seq, heads]` log-sum-exp, from
/// tensors made by [`head_rows_tensor`].
pub(super) fn forward(
    queries: &FlexTensor,
    keys: &FlexTensor,
    values: &FlexTensor,
    mask: &AttentionMask,
) -> (FlexTensor, Vec<f32>) {
    let call = inputs((queries, keys, values), mask);
    let Dims {
        batch,
        heads,
        seq,
        dim,
        ..
    } = call.dims;
    let mut out = vec![0.0f32; batch * seq * heads * dim];
    let mut log_sum_exp = vec![0.0f32; batch * seq * heads];
    call.forward(&mut out, &mut log_sum_exp);
    let out = from_values(Shape::from(vec![batch, seq, heads * dim]), out);
    (out, log_sum_exp)
}

/// What [`AttentionStep`] keeps: the three inputs (as [`head_rows_tensor`] made them), the
/// mask, the output and each row's log-sum-exp.
#[derive(Debug, Clone)]
struct AttentionState {
    queries: FlexTensor,
    keys: FlexTensor,
    values: FlexTensor,
    mask: Arc<AttentionMask>,
    out: FlexTensor,
    log_sum_exp: Vec<f32>,
}

#[derive(Debug)]
struct AttentionStep;

impl Backward<Flex, 3> for AttentionStep {
    type State = AttentionState;

    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let d_out = output_grad(&ops, grads);
        let state = ops.state;
        let call = inputs((&state.queries, &state.keys, &state.values), &state.mask);
        let Dims {
            batch,
            heads,
            kv_heads,
            seq,
            total,
            dim,
        } = call.dims;
        let mut d_queries = vec![0.0f32; batch * heads * seq * dim];
        let mut d_keys = vec![0.0f32; batch * kv_heads * total * dim];
        let mut d_values = vec![0.0f32; d_keys.len()];
        call.backward(
            Saved {
                out: values(&state.out),
                log_sum_exp: &state.log_sum_exp,
                d_out: values(&d_out),
            },
            Grads {
                queries: &mut d_queries,
                keys: &mut d_keys,
                values: &mut d_values,
            },
        );
        let [q_node, k_node, v_node] = ops.parents;
        let kv_shape = Shape::from(vec![batch, kv_heads, total, dim]);
        if let Some(node) = q_node {
            let shape = Shape::from(vec![batch, heads, seq, dim]);
            grads.register::<Flex>(node.id, from_values(shape, d_queries));
        }
        if let Some(node) = k_node {
            grads.register::<Flex>(node.id, from_values(kv_shape.clone(), d_keys));
        }
        if let Some(node) = v_node {
            grads.register::<Flex>(node.id, from_values(kv_shape, d_values));
        }
    }
}

/// Attention as one graph node: `[batch, seq, heads * dim]`.
pub(super) fn attention(
    queries: Tracked,
    keys: Tracked,
    values: Tracked,
    mask: Arc<AttentionMask>,
) -> Tracked {
    let q = head_rows_tensor(&queries.primitive);
    let k = head_rows_tensor(&keys.primitive);
    let v = head_rows_tensor(&values.primitive);
    let (out, log_sum_exp) = forward(&q, &k, &v, &mask);
    let saved = out.clone();
    let state = || AttentionState {
        queries: q,
        keys: k,
        values: v,
        mask,
        out: saved,
        log_sum_exp,
    };
    record(AttentionStep, [&queries, &keys, &values], state, out)
}
