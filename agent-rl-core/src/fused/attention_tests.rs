//! The blocked attention kernel against the whole-matrix tensor ops ([`super::plain::attention`]):
//! outputs on Flex and `Autodiff<Flex>`, gradients of queries, keys and values, over grouped
//! heads, left padding, a KV-cache offset, a single decode query, packed examples and sizes that
//! are not multiples of the blocks.

use std::sync::Arc;

use burn::prelude::*;
use burn::tensor::TensorData;
use burn_flex::Flex;

use super::plain;
use super::tests::{Ad, assert_close, values};
use crate::model::AttentionMask;

/// Shapes of one case: sequences, query heads, key heads, queries, keys, head width.
struct Case {
    heads: usize,
    kv_heads: usize,
    dim: usize,
    mask: AttentionMask,
}

/// A leaf of `shape` with values in `[-scale, scale)`.
fn leaf(shape: [usize; 4], seed: u64, scale: f32) -> Tensor<Ad, 4> {
    let data: Vec<f32> = values(shape.iter().product(), seed)
        .into_iter()
        .map(|v| v * scale / 2.0)
        .collect();
    Tensor::<Ad, 4>::from_data(TensorData::new(data, shape), &Default::default()).require_grad()
}

/// `[batch, heads, seq, total]` additive bias of `mask`.
fn bias(mask: &AttentionMask, heads: usize) -> Tensor<Ad, 4> {
    let [batch, seq, total] = mask.dims();
    let one_head = mask.bias();
    let mut data = Vec::with_capacity(one_head.len() * heads);
    for example in one_head.chunks_exact(seq * total) {
        for _ in 0..heads {
            data.extend_from_slice(example);
        }
    }
    Tensor::from_data(
        TensorData::new(data, [batch, heads, seq, total]),
        &Default::default(),
    )
}

/// Output weights for the loss `sum(out * weights)`: zero on the rows of queries that see no
/// key (padding; their gradient in the tensor-op version is an artefact of the large negative
/// bias, and no loss reads them).
fn loss_weights(mask: &AttentionMask, heads: usize, dim: usize) -> Tensor<Ad, 3> {
    let [batch, seq, total] = mask.dims();
    let mut data = values(batch * seq * heads * dim, 77);
    for b in 0..batch {
        for q in 0..seq {
            if !(0..total).any(|k| mask.visible(b, q, k)) {
                let start = (b * seq + q) * heads * dim;
                data[start..start + heads * dim].fill(0.0);
            }
        }
    }
    Tensor::from_data(
        TensorData::new(data, [batch, seq, heads * dim]),
        &Default::default(),
    )
}

/// The blocked kernel, whatever the size (the sizes here are below
/// [`super::BLOCKED_MIN_SCORES`], where [`super::attention`] takes the whole-matrix path).
fn blocked<B: Backend>(
    queries: Tensor<B, 4>,
    keys: Tensor<B, 4>,
    values: Tensor<B, 4>,
    mask: &Arc<AttentionMask>,
) -> Tensor<B, 3> {
    super::dispatch::attention(queries, keys, values, mask)
        .unwrap_or_else(|_| panic!("the kernel takes f32 inputs of matching shapes"))
}

fn check(what: &str, case: Case) {
    let Case {
        heads,
        kv_heads,
        dim,
        mask,
    } = case;
    let [batch, seq, total] = mask.dims();
    let queries = leaf([batch, heads, seq, dim], 1, 1.0 / (dim as f32).sqrt());
    let keys = leaf([batch, kv_heads, total, dim], 2, 2.0);
    let values = leaf([batch, kv_heads, total, dim], 3, 2.0);
    let bias = bias(&mask, heads);
    let mask = Arc::new(mask);
    let fused = blocked(queries.clone(), keys.clone(), values.clone(), &mask);
    let reference = plain::attention(queries.clone(), keys.clone(), values.clone(), bias);
    assert_close(fused.clone().inner(), reference.clone().inner(), what);

    let weights = loss_weights(&mask, heads, dim);
    let fused_grads = (fused * weights.clone()).sum().backward();
    let plain_grads = (reference.clone() * weights).sum().backward();
    for (name, leaf) in [("queries", &queries), ("keys", &keys), ("values", &values)] {
        let grad = |grads| leaf.grad(grads).expect("the leaf has a gradient");
        assert_close(
            grad(&fused_grads),
            grad(&plain_grads),
            &format!("{what}: gradient of {name}"),
        );
    }

    let inference = blocked(queries.inner(), keys.inner(), values.inner(), &mask);
    assert_close(inference, reference.inner(), &format!("{what} (inference)"));
}

/// Left-padded rows (none, a few, most) of `total` positions, the last `seq` of them new.
fn padded(total: usize, seq: usize, pads: &[usize]) -> AttentionMask {
    let rows: Vec<Vec<bool>> = pads
        .iter()
        .map(|&pad| (0..total).map(|k| k >= pad).collect())
        .collect();
    AttentionMask::causal(&rows, total - seq)
}

#[test]
fn causal_prefill_with_left_padding_and_grouped_heads() {
    // 70 queries (two query blocks), 70 keys; one row has padding queries that see no key.
    let mask = padded(70, 70, &[0, 5, 66]);
    let case = Case {
        heads: 6,
        kv_heads: 2,
        dim: 8,
        mask,
    };
    check("prefill", case);
}

#[test]
fn queries_after_a_cache_across_key_blocks() {
    // 67 cached positions (past > 0) and 70 new: 137 keys, two key blocks and a remainder.
    let case = Case {
        heads: 4,
        kv_heads: 2,
        dim: 16,
        mask: padded(137, 70, &[3, 0]),
    };
    check("after a cache", case);
}

#[test]
fn one_decode_query_over_a_long_cache() {
    let case = Case {
        heads: 4,
        kv_heads: 1,
        dim: 8,
        mask: padded(301, 1, &[0, 17, 250]),
    };
    check("decode", case);
}

#[test]
fn packed_examples_see_only_themselves() {
    // Two rows of 131 positions: examples of 50 and 60 tokens then padding (attending to
    // itself), and one example filling the row.
    let seq = 131;
    let mut ranges = Vec::new();
    for lengths in [[50usize, 60], [seq, 0]] {
        let mut start = 0;
        for length in lengths {
            ranges.extend((start..start + length).map(|q| start..q + 1));
            start += length;
        }
        ranges.extend((start..seq).map(|q| q..q + 1));
    }
    let mask = AttentionMask::from_parts([2, seq, seq], vec![true; 2 * seq], ranges);
    let case = Case {
        heads: 2,
        kv_heads: 2,
        dim: 4,
        mask,
    };
    check("packed", case);
}

#[test]
fn a_cache_with_spare_room_is_read_in_place() {
    // Keys and values grown by `append_positions` on Flex are views into a longer buffer.
    let [batch, kv_heads, dim, heads] = [2, 2, 8, 4];
    let device = Default::default();
    let tensor = |shape: [usize; 4], seed| {
        let data = values(shape.iter().product(), seed);
        Tensor::<Flex, 4>::from_data(TensorData::new(data, shape), &device)
    };
    let (mut keys, mut values) = (
        tensor([batch, kv_heads, 20, dim], 5),
        tensor([batch, kv_heads, 20, dim], 6),
    );
    for step in 0..3u64 {
        keys = super::append_positions(keys, tensor([batch, kv_heads, 1, dim], 10 + step));
        values = super::append_positions(values, tensor([batch, kv_heads, 1, dim], 20 + step));
    }
    let mask = padded(23, 1, &[0, 4]);
    let queries = tensor([batch, heads, 1, dim], 9);
    let bias = bias(&mask, heads).inner();
    let mask = Arc::new(mask);
    let contiguous = |x: Tensor<Flex, 4>| Tensor::<Flex, 4>::from_data(x.into_data(), &device);
    let expected = plain::attention(
        queries.clone(),
        contiguous(keys.clone()),
        contiguous(values.clone()),
        bias,
    );
    let fused = blocked(queries, keys, values, &mask);
    assert_close(fused, expected, "cache view");
}

#[test]
fn long_calls_take_the_kernel_and_short_ones_the_products() {
    let device = Default::default();
    let tensor = |shape: [usize; 4], seed| {
        let data = values(shape.iter().product(), seed);
        Tensor::<Flex, 4>::from_data(TensorData::new(data, shape), &device)
    };
    let decode = super::BLOCKED_DECODE_MIN_KEYS;
    // (total keys, queries, whether the whole-matrix path asks for the bias): a long prefill,
    // a short one, a decode step over a long cache and one over a cache one position shorter.
    for (total, seq, bias_wanted) in [
        (257, 257, false),
        (20, 20, true),
        (decode, 1, false),
        (decode - 1, 1, true),
    ] {
        let mask = padded(total, seq, &[0]);
        assert_eq!(super::takes_blocked_kernel(seq, total), !bias_wanted);
        let (queries, keys, values) = (
            tensor([1, 2, seq, 4], 1),
            tensor([1, 1, total, 4], 2),
            tensor([1, 1, total, 4], 3),
        );
        let bias = bias(&mask, 2).inner();
        let expected =
            plain::attention(queries.clone(), keys.clone(), values.clone(), bias.clone());
        let mask = Arc::new(mask);
        let asked = std::cell::Cell::new(false);
        let out = super::attention(queries, keys, values, &mask, || {
            asked.set(true);
            bias
        });
        assert_eq!(asked.get(), bias_wanted, "{total} keys");
        assert_close(out, expected, &format!("{total} keys"));
    }
}
