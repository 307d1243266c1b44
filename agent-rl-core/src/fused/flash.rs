//! Attention in blocks on `f32` slices, FlashAttention-2 style: the `[heads, seq, total]`
//! scores are never stored.
//!
//! The forward pass walks the keys in blocks of [`KEY_BLOCK`] for a block of [`QUERY_BLOCK`]
//! queries (all query heads of one key head together, so each key block is read once per
//! group), keeps a running maximum and sum per row (online softmax), and stores only the output
//! and each row's log-sum-exp. The backward pass recomputes each block's probabilities from
//! that log-sum-exp and `D = rowsum(dO ∘ O)`: `dV += Pᵀ dO`, `dS = P ∘ (dO Vᵀ - D)`,
//! `dQ += dS K`, `dK += dSᵀ Q`. Both run in parallel with rayon: the forward over (sequence,
//! query block), the backward over (sequence, key head), which owns its queries' and its key
//! head's gradients outright. Which keys a query sees comes from an [`AttentionMask`]; blocks
//! past a query block's ranges are skipped (half the work of a causal mask).
//!
//! Queries come scaled (the rotary tables carry `1 / sqrt(head_dim)`): scores are `q · k`.

use rayon::prelude::*;

use super::gemm::{MatRef, matmul_into};
use super::rows::{exp, max_of};
use crate::model::AttentionMask;

/// Queries per block.
const QUERY_BLOCK: usize = 64;
/// Keys per block.
const KEY_BLOCK: usize = 128;

/// Sizes of one attention call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dims {
    /// Sequences.
    pub(crate) batch: usize,
    /// Query heads (a multiple of `kv_heads`).
    pub(crate) heads: usize,
    /// Key/value heads.
    pub(crate) kv_heads: usize,
    /// Queries per sequence.
    pub(crate) seq: usize,
    /// Keys per sequence.
    pub(crate) total: usize,
    /// Width of one head.
    pub(crate) dim: usize,
}

impl Dims {
    /// Query heads per key head.
    fn group(&self) -> usize {
        self.heads / self.kv_heads
    }

    /// Whether any of the sizes is zero (nothing to compute).
    fn is_empty(&self) -> bool {
        [
            self.batch,
            self.heads,
            self.kv_heads,
            self.seq,
            self.total,
            self.dim,
        ]
        .contains(&0)
    }
}

/// Per-head matrices `[batch, heads, len, dim]` in a buffer with `dim`-long rows stored one
/// after the other: row `t` of head `h` of sequence `b` starts at
/// `start + b * batch_stride + h * head_stride + t * dim` (a KV cache with spare room has a
/// head stride larger than `len * dim`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeadRows<'a> {
    /// The buffer.
    pub(crate) data: &'a [f32],
    /// Offset of the first element.
    pub(crate) start: usize,
    /// Elements between sequences.
    pub(crate) batch_stride: usize,
    /// Elements between heads.
    pub(crate) head_stride: usize,
}

impl<'a> HeadRows<'a> {
    /// Rows `from..from + count` of head `h` of sequence `b`, as a `count x dim` matrix.
    fn block(&self, b: usize, h: usize, from: usize, count: usize, dim: usize) -> MatRef<'a> {
        let offset = self.start + b * self.batch_stride + h * self.head_stride + from * dim;
        MatRef::new(self.data, offset, [count, dim], [dim, 1])
    }

    /// Row `t` of head `h` of sequence `b`.
    fn row(&self, b: usize, h: usize, t: usize, dim: usize) -> &'a [f32] {
        let offset = self.start + b * self.batch_stride + h * self.head_stride + t * dim;
        &self.data[offset..offset + dim]
    }
}

/// The inputs of one attention call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attention<'a> {
    /// `[batch, heads, seq, dim]`, scaled.
    pub(crate) queries: HeadRows<'a>,
    /// `[batch, kv_heads, total, dim]`.
    pub(crate) keys: HeadRows<'a>,
    /// `[batch, kv_heads, total, dim]`.
    pub(crate) values: HeadRows<'a>,
    /// Which keys each query sees.
    pub(crate) mask: &'a AttentionMask,
    /// The sizes.
    pub(crate) dims: Dims,
}

/// One block of queries of one sequence and key head: `group * count` rows, all query heads of
/// the group (row `g * count + i` is head `kv * group + g`, query `first + i`).
#[derive(Debug, Clone, Copy)]
struct QueryBlock {
    b: usize,
    kv: usize,
    first: usize,
    count: usize,
}

impl QueryBlock {
    /// The block's query (`i`) of row `r`.
    fn query(&self, r: usize) -> usize {
        self.first + r % self.count
    }

    /// The query head of row `r`.
    fn head(&self, r: usize, group: usize) -> usize {
        self.kv * group + r / self.count
    }
}

impl Attention<'_> {
    /// The keys that some query of `block` may see, `lo..hi` (empty when none).
    fn key_span(&self, block: &QueryBlock) -> (usize, usize) {
        let (mut lo, mut hi) = (usize::MAX, 0);
        for query in block.first..block.first + block.count {
            let (start, end) = self.mask.range(block.b, query);
            if start < end {
                lo = lo.min(start);
                hi = hi.max(end);
            }
        }
        if lo >= hi { (0, 0) } else { (lo, hi) }
    }

    /// `scores` (`rows x count`, row-major) `= Q · K[from..from + count]ᵀ`, with the keys a row
    /// does not see set to `-inf`.
    fn block_scores(
        &self,
        block: &QueryBlock,
        queries: &[f32],
        from: usize,
        count: usize,
        scores: &mut [f32],
    ) {
        let Dims { dim, .. } = self.dims;
        let rows = queries.len() / dim;
        let keys = self.keys.block(block.b, block.kv, from, count, dim);
        matmul_into(
            scores,
            MatRef::row_major(queries, rows, dim),
            keys.t(),
            false,
            false,
        );
        let flags = &self.mask.keys(block.b)[from..from + count];
        let all_real = flags.iter().all(|&real| real);
        for (r, row) in scores.chunks_exact_mut(count).enumerate() {
            let (start, end) = self.mask.range(block.b, block.query(r));
            if all_real && start <= from && from + count <= end {
                continue;
            }
            for (j, score) in row.iter_mut().enumerate() {
                let key = from + j;
                if key < start || key >= end || !flags[j] {
                    *score = f32::NEG_INFINITY;
                }
            }
        }
    }

    /// The block's query rows (`rows x dim`), gathered from `source` laid out like the queries
    /// (`[batch, heads, seq, dim]`).
    fn gather_queries(&self, block: &QueryBlock, into: &mut [f32]) {
        let Dims { dim, .. } = self.dims;
        let group = self.dims.group();
        for (r, row) in into.chunks_exact_mut(dim).enumerate() {
            row.copy_from_slice(self.queries.row(
                block.b,
                block.head(r, group),
                block.query(r),
                dim,
            ));
        }
    }

    /// The mean of all values of key head `kv` of sequence `b`: the output of a query that sees
    /// no key.
    fn mean_value(&self, b: usize, kv: usize) -> Vec<f32> {
        let Dims { dim, total, .. } = self.dims;
        let mut mean = vec![0.0f32; dim];
        for t in 0..total {
            for (m, &v) in mean.iter_mut().zip(self.values.row(b, kv, t, dim)) {
                *m += v;
            }
        }
        mean.iter_mut().for_each(|m| *m /= total as f32);
        mean
    }

    /// Writes the output (`[batch, seq, heads, dim]`) and each row's log-sum-exp
    /// (`[batch, seq, heads]`; `+inf` for a query that sees no key).
    pub(crate) fn forward(&self, out: &mut [f32], log_sum_exp: &mut [f32]) {
        let Dims {
            seq, heads, dim, ..
        } = self.dims;
        if self.dims.is_empty() {
            return;
        }
        let mut tasks = Vec::new();
        for (b, (out, lse)) in out
            .chunks_mut(seq * heads * dim)
            .zip(log_sum_exp.chunks_mut(seq * heads))
            .enumerate()
        {
            for (index, (out, lse)) in out
                .chunks_mut(QUERY_BLOCK * heads * dim)
                .zip(lse.chunks_mut(QUERY_BLOCK * heads))
                .enumerate()
            {
                tasks.push((b, index * QUERY_BLOCK, out, lse));
            }
        }
        tasks.into_par_iter().for_each(|(b, first, out, lse)| {
            let count = lse.len() / heads;
            for kv in 0..self.dims.kv_heads {
                let block = QueryBlock {
                    b,
                    kv,
                    first,
                    count,
                };
                self.forward_block(&block, out, lse);
            }
        });
    }

    /// [`forward`](Self::forward) for one query block; `out` and `lse` hold the block's queries
    /// (all heads).
    fn forward_block(&self, block: &QueryBlock, out: &mut [f32], lse: &mut [f32]) {
        let Dims { dim, heads, .. } = self.dims;
        let group = self.dims.group();
        let rows = group * block.count;
        let mut queries = vec![0.0f32; rows * dim];
        self.gather_queries(block, &mut queries);
        let mut scores = vec![0.0f32; rows * KEY_BLOCK];
        let mut acc = vec![0.0f32; rows * dim];
        let mut max = vec![f32::NEG_INFINITY; rows];
        let mut sum = vec![0.0f32; rows];
        let (lo, hi) = self.key_span(block);
        for from in (lo..hi).step_by(KEY_BLOCK) {
            let count = KEY_BLOCK.min(hi - from);
            let scores = &mut scores[..rows * count];
            self.block_scores(block, &queries, from, count, scores);
            for (r, row) in scores.chunks_exact_mut(count).enumerate() {
                let row_max = max_of(row, |s| s);
                if row_max == f32::NEG_INFINITY {
                    row.fill(0.0);
                    continue;
                }
                let new_max = max[r].max(row_max);
                // Two loops: with the sum inside, the exponentials would not vectorise (the sum
                // itself keeps its left-to-right order).
                row.iter_mut().for_each(|s| *s = exp(*s - new_max));
                let row_sum = row.iter().fold(0.0f32, |sum, &s| sum + s);
                if max[r] != f32::NEG_INFINITY && max[r] != new_max {
                    let rescale = exp(max[r] - new_max);
                    sum[r] *= rescale;
                    acc[r * dim..(r + 1) * dim]
                        .iter_mut()
                        .for_each(|a| *a *= rescale);
                }
                sum[r] += row_sum;
                max[r] = new_max;
            }
            let values = self.values.block(block.b, block.kv, from, count, dim);
            matmul_into(
                &mut acc,
                MatRef::row_major(scores, rows, count),
                values,
                true,
                false,
            );
        }
        let mut uniform: Option<Vec<f32>> = None;
        for r in 0..rows {
            let (i, head) = (r % block.count, block.head(r, group));
            let at = i * heads + head;
            let target = &mut out[at * dim..(at + 1) * dim];
            if sum[r] == 0.0 {
                let mean = uniform.get_or_insert_with(|| self.mean_value(block.b, block.kv));
                target.copy_from_slice(mean);
                lse[at] = f32::INFINITY;
            } else {
                let inv = 1.0 / sum[r];
                for (o, &a) in target.iter_mut().zip(&acc[r * dim..(r + 1) * dim]) {
                    *o = a * inv;
                }
                lse[at] = max[r] + sum[r].ln();
            }
        }
    }

    /// Gradients from the forward's `out` and `log_sum_exp` and the output gradient `d_out`
    /// (all `[batch, seq, heads, ...]`): writes `d_queries` (`[batch, heads, seq, dim]`),
    /// `d_keys` and `d_values` (`[batch, kv_heads, total, dim]`), which must hold zeros.
    pub(crate) fn backward(&self, saved: Saved<'_>, grads: Grads<'_>) {
        let Dims {
            seq, total, dim, ..
        } = self.dims;
        if self.dims.is_empty() {
            return;
        }
        let group = self.dims.group();
        let kv_heads = self.dims.kv_heads;
        grads
            .queries
            .par_chunks_mut(group * seq * dim)
            .zip(grads.keys.par_chunks_mut(total * dim))
            .zip(grads.values.par_chunks_mut(total * dim))
            .enumerate()
            .for_each(|(task, ((d_queries, d_keys), d_values))| {
                let (b, kv) = (task / kv_heads, task % kv_heads);
                for first in (0..seq).step_by(QUERY_BLOCK) {
                    let block = QueryBlock {
                        b,
                        kv,
                        first,
                        count: QUERY_BLOCK.min(seq - first),
                    };
                    let into = Grads {
                        queries: &mut *d_queries,
                        keys: &mut *d_keys,
                        values: &mut *d_values,
                    };
                    self.backward_block(&block, saved, into);
                }
            });
    }

    /// [`backward`](Self::backward) for one query block; `grads` hold the block's sequence and
    /// key head: its group's query heads (`[group, seq, dim]`), its keys and values
    /// (`[total, dim]`).
    fn backward_block(&self, block: &QueryBlock, saved: Saved<'_>, grads: Grads<'_>) {
        let Dims {
            dim,
            heads,
            seq,
            total,
            ..
        } = self.dims;
        let group = self.dims.group();
        let rows = group * block.count;
        let mut queries = vec![0.0f32; rows * dim];
        self.gather_queries(block, &mut queries);
        // The output gradient's rows, each row's log-sum-exp and D = rowsum(dO ∘ O).
        let mut d_out = vec![0.0f32; rows * dim];
        let mut lse = vec![0.0f32; rows];
        let mut delta = vec![0.0f32; rows];
        for r in 0..rows {
            let at = (block.b * seq + block.query(r)) * heads + block.head(r, group);
            let span = at * dim..(at + 1) * dim;
            d_out[r * dim..(r + 1) * dim].copy_from_slice(&saved.d_out[span.clone()]);
            lse[r] = saved.log_sum_exp[at];
            delta[r] = saved.d_out[span.clone()]
                .iter()
                .zip(&saved.out[span])
                .map(|(g, o)| g * o)
                .sum();
        }
        let mut d_queries = vec![0.0f32; rows * dim];
        let mut probs = vec![0.0f32; rows * KEY_BLOCK];
        let mut d_scores = vec![0.0f32; rows * KEY_BLOCK];
        let (lo, hi) = self.key_span(block);
        for from in (lo..hi).step_by(KEY_BLOCK) {
            let count = KEY_BLOCK.min(hi - from);
            let probs = &mut probs[..rows * count];
            let d_scores = &mut d_scores[..rows * count];
            self.block_scores(block, &queries, from, count, probs);
            for (row, &lse) in probs.chunks_exact_mut(count).zip(&lse) {
                row.iter_mut().for_each(|s| *s = exp(*s - lse));
            }
            let keys = self.keys.block(block.b, block.kv, from, count, dim);
            let values = self.values.block(block.b, block.kv, from, count, dim);
            let span = from * dim..(from + count) * dim;
            // dV += Pᵀ dO
            matmul_into(
                &mut grads.values[span.clone()],
                MatRef::row_major(probs, rows, count).t(),
                MatRef::row_major(&d_out, rows, dim),
                true,
                false,
            );
            // dS = P ∘ (dO Vᵀ - D)
            matmul_into(
                d_scores,
                MatRef::row_major(&d_out, rows, dim),
                values.t(),
                false,
                false,
            );
            for ((d_row, p_row), &delta) in d_scores
                .chunks_exact_mut(count)
                .zip(probs.chunks_exact(count))
                .zip(&delta)
            {
                for (d, &p) in d_row.iter_mut().zip(p_row) {
                    *d = p * (*d - delta);
                }
            }
            // dQ += dS K, dK += dSᵀ Q
            matmul_into(
                &mut d_queries,
                MatRef::row_major(d_scores, rows, count),
                keys,
                true,
                false,
            );
            matmul_into(
                &mut grads.keys[span],
                MatRef::row_major(d_scores, rows, count).t(),
                MatRef::row_major(&queries, rows, dim),
                true,
                false,
            );
        }
        for r in 0..rows {
            let (g, query) = (r / block.count, block.query(r));
            let start = (g * seq + query) * dim;
            grads.queries[start..start + dim].copy_from_slice(&d_queries[r * dim..(r + 1) * dim]);
            if lse[r] == f32::INFINITY {
                // A query that sees no key averages every value: dV += dO / total.
                let share = 1.0 / total as f32;
                for value_row in grads.values.chunks_exact_mut(dim) {
                    for (v, &g) in value_row.iter_mut().zip(&d_out[r * dim..(r + 1) * dim]) {
                        *v += g * share;
                    }
                }
            }
        }
    }
}

/// What the backward pass reads from the forward pass and the output gradient.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Saved<'a> {
    /// The forward's output, `[batch, seq, heads, dim]`.
    pub(crate) out: &'a [f32],
    /// The forward's log-sum-exp per row, `[batch, seq, heads]`.
    pub(crate) log_sum_exp: &'a [f32],
    /// The gradient of the output, `[batch, seq, heads, dim]`.
    pub(crate) d_out: &'a [f32],
}

/// The gradients the backward pass writes.
#[derive(Debug)]
pub(crate) struct Grads<'a> {
    /// `[batch, heads, seq, dim]`.
    pub(crate) queries: &'a mut [f32],
    /// `[batch, kv_heads, total, dim]`.
    pub(crate) keys: &'a mut [f32],
    /// `[batch, kv_heads, total, dim]`.
    pub(crate) values: &'a mut [f32],
}
