//! The fused kernels on plain `f32` slices, row-parallel with rayon.
//!
//! Each function makes one pass over its rows (two where a row statistic comes first) and runs
//! rows in parallel, in tasks of at least [`TASK_ELEMENTS`] elements so that the small tensors of
//! a decode step stay on one thread. Rows are row-major and `width` long.
//!
//! Outputs are uninitialised buffers (`MaybeUninit<f32>`) that each `*_into` kernel writes in full (every
//! row through [`write_row1`] and its siblings, which check their inputs' lengths, or an index
//! loop over the whole checked length), so the public kernels allocate them without zeroing
//! first ([`written_by`]) and hand back plain `Vec<f32>`s: a zeroing pass on the calling thread
//! is a measurable share of a short GRPO step (docs/src/experiments).

use std::mem::MaybeUninit;

use rayon::prelude::*;

/// `row` with its memory viewed as the `f32` values it now holds.
///
/// # Safety
/// Every element of `row` has been written.
#[allow(unsafe_code)]
#[inline(always)]
unsafe fn assume_written(row: &mut [MaybeUninit<f32>]) -> &mut [f32] {
    // SAFETY: the caller guarantees every element is initialised, and `MaybeUninit<f32>` has
    // the layout of `f32`.
    unsafe { &mut *(std::ptr::from_mut(row) as *mut [f32]) }
}

/// Writes `f(a_i)` into every element `i` of `row` and returns it, now initialised.
///
/// # Panics
/// When `a` is not as long as `row` (a bug in the kernel).
#[inline(always)]
fn write_row1<'a>(
    row: &'a mut [MaybeUninit<f32>],
    a: &[f32],
    f: impl Fn(f32) -> f32,
) -> &'a mut [f32] {
    assert_eq!(a.len(), row.len(), "kernel input row length");
    for (slot, &a) in row.iter_mut().zip(a) {
        slot.write(f(a));
    }
    // SAFETY: `a` is as long as `row`, so the loop wrote every element.
    #[allow(unsafe_code)]
    unsafe {
        assume_written(row)
    }
}

/// Writes `f(a_i, b_i)` into every element `i` of `row` and returns it, now initialised.
///
/// # Panics
/// When `a` or `b` is not as long as `row`.
#[inline(always)]
fn write_row2<'a>(
    row: &'a mut [MaybeUninit<f32>],
    a: &[f32],
    b: &[f32],
    f: impl Fn(f32, f32) -> f32,
) -> &'a mut [f32] {
    assert!(
        a.len() == row.len() && b.len() == row.len(),
        "kernel input row lengths"
    );
    for ((slot, &a), &b) in row.iter_mut().zip(a).zip(b) {
        slot.write(f(a, b));
    }
    // SAFETY: `a` and `b` are as long as `row`, so the loop wrote every element.
    #[allow(unsafe_code)]
    unsafe {
        assume_written(row)
    }
}

/// Writes `f(a_i, b_i, c_i)` into every element `i` of `row`.
///
/// # Panics
/// When an input is not as long as `row`.
#[inline(always)]
fn write_row3(
    row: &mut [MaybeUninit<f32>],
    [a, b, c]: [&[f32]; 3],
    f: impl Fn(f32, f32, f32) -> f32,
) {
    let n = row.len();
    assert!(
        a.len() == n && b.len() == n && c.len() == n,
        "kernel input row lengths"
    );
    for (((slot, &a), &b), &c) in row.iter_mut().zip(a).zip(b).zip(c) {
        slot.write(f(a, b, c));
    }
}

/// Writes `f(a_i, b_i, c_i, d_i)` into every element `i` of `row`.
///
/// # Panics
/// When an input is not as long as `row`.
#[inline(always)]
fn write_row4(
    row: &mut [MaybeUninit<f32>],
    [a, b, c, d]: [&[f32]; 4],
    f: impl Fn(f32, f32, f32, f32) -> f32,
) {
    let n = row.len();
    assert!(
        a.len() == n && b.len() == n && c.len() == n && d.len() == n,
        "kernel input row lengths"
    );
    for ((((slot, &a), &b), &c), &d) in row.iter_mut().zip(a).zip(b).zip(c).zip(d) {
        slot.write(f(a, b, c, d));
    }
}

/// A new buffer of `len` values, all written by `fill`, with no zeroing pass first, and what
/// `fill` returned.
///
/// # Safety
/// `fill` must write every element of the slice it is given (the `*_into` kernels of this
/// module do, after checking their output's length).
#[allow(unsafe_code)]
unsafe fn written_by<R>(
    len: usize,
    fill: impl FnOnce(&mut [MaybeUninit<f32>]) -> R,
) -> (Vec<f32>, R) {
    let mut out = Vec::with_capacity(len);
    let result = fill(&mut out.spare_capacity_mut()[..len]);
    // SAFETY: the caller guarantees that `fill` wrote all `len` elements; the capacity is at
    // least `len`.
    unsafe { out.set_len(len) };
    (out, result)
}

/// Checks that an output buffer holds exactly `len` values (so that the row loops cover it).
fn check_len(out: &[MaybeUninit<f32>], len: usize) {
    assert_eq!(out.len(), len, "kernel output length");
}

/// Fewest elements one rayon task handles.
const TASK_ELEMENTS: usize = 1 << 14;

/// Rows per rayon task for rows of `width` elements.
fn rows_per_task(width: usize) -> usize {
    (TASK_ELEMENTS / width.max(1)).max(1)
}

/// `e^x` in straight-line arithmetic that the compiler vectorises (the C library's `expf` is a
/// call per element): `2^n * e^r` with `n = round(x / ln 2)` and a degree-6 Taylor polynomial for
/// `|r| <= ln(2) / 2` (relative error below 4e-7). Results below `e^-86.5` are exactly zero and
/// never denormal: denormals fed to the matrix products downstream (masked attention weights)
/// slow them several times over.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0; // 1.5 * 2^23: adding and subtracting it rounds to an integer
    const LOWEST: f32 = -86.5;
    let clamped = x.clamp(LOWEST, 88.0);
    let n = (clamped * std::f32::consts::LOG2_E + ROUND) - ROUND;
    // ln 2 split in two so that `n * LN2_HIGH` is exact.
    let r = clamped - n * 0.693_145_75 - n * 1.428_606_8e-6;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    let value = f32::from_bits(((n as i32 + 127) as u32) << 23) * p;
    if x < LOWEST { 0.0 } else { value }
}

/// The largest `f(v)` over `values` (`-inf` when empty; NaNs ignored, as by `f32::max`).
///
/// Sixteen running maxima instead of one, so that the loop vectorises; the maximum is exact, so
/// the result is the one a left-to-right fold gives (up to the sign of a zero maximum, which no
/// caller can tell apart: they subtract it or add it to a non-zero value).
#[inline(always)]
pub(crate) fn max_of(values: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    const LANES: usize = 16;
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let mut chunks = values.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (lane, &v) in lanes.iter_mut().zip(chunk) {
            *lane = lane.max(f(v));
        }
    }
    let tail = chunks
        .remainder()
        .iter()
        .fold(f32::NEG_INFINITY, |m, &v| m.max(f(v)));
    lanes.into_iter().fold(tail, f32::max)
}

/// Logistic sigmoid, stable for large `|x|`.
#[inline(always)]
fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + exp(-x))
}

/// `out = silu(gate) * up`, elementwise.
fn silu_mul_into(gate: &[f32], up: &[f32], out: &mut [MaybeUninit<f32>]) {
    check_len(out, gate.len());
    assert_eq!(up.len(), gate.len(), "silu_mul: gate and up lengths");
    out.par_chunks_mut(TASK_ELEMENTS)
        .zip(gate.par_chunks(TASK_ELEMENTS))
        .zip(up.par_chunks(TASK_ELEMENTS))
        .for_each(|((out, gate), up)| {
            write_row2(out, gate, up, |g, u| g * sigmoid(g) * u);
        });
}

/// Gradients of [`silu_mul_into`]: `d_gate = d_out * up * s * (1 + gate * (1 - s))` with
/// `s = sigmoid(gate)`, and `d_up = d_out * silu(gate)`.
fn silu_mul_backward_into(
    gate: &[f32],
    up: &[f32],
    d_out: &[f32],
    d_gate: &mut [MaybeUninit<f32>],
    d_up: &mut [MaybeUninit<f32>],
) {
    let len = gate.len();
    check_len(d_gate, len);
    check_len(d_up, len);
    assert!(
        up.len() == len && d_out.len() == len,
        "silu_mul_backward: input lengths"
    );
    d_gate
        .par_chunks_mut(TASK_ELEMENTS)
        .zip(d_up.par_chunks_mut(TASK_ELEMENTS))
        .zip(gate.par_chunks(TASK_ELEMENTS))
        .zip(
            up.par_chunks(TASK_ELEMENTS)
                .zip(d_out.par_chunks(TASK_ELEMENTS)),
        )
        .for_each(|(((d_gate, d_up), gate), (up, d_out))| {
            assert!(d_gate.len() == gate.len() && d_up.len() == gate.len());
            for i in 0..gate.len() {
                let (g, u, d) = (gate[i], up[i], d_out[i]);
                let s = sigmoid(g);
                d_up[i].write(d * g * s);
                d_gate[i].write(d * u * s * (1.0 + g * (1.0 - s)));
            }
        });
}

/// RMSNorm of each row: `out = x / sqrt(mean(x²) + eps) * weight`; returns each row's
/// `1 / sqrt(mean(x²) + eps)` for the backward pass.
fn rms_norm_into(x: &[f32], weight: &[f32], eps: f32, out: &mut [MaybeUninit<f32>]) -> Vec<f32> {
    let width = weight.len();
    check_len(out, x.len());
    assert_eq!(x.len() % width.max(1), 0, "rms_norm: whole rows");
    let chunk = rows_per_task(width) * width;
    let mut inv_rms = vec![0.0f32; x.len() / width.max(1)];
    out.par_chunks_mut(chunk)
        .zip(x.par_chunks(chunk))
        .zip(inv_rms.par_chunks_mut(rows_per_task(width)))
        .for_each(|((out, x), inv_rms)| {
            for ((out, x), inv) in out
                .chunks_exact_mut(width)
                .zip(x.chunks_exact(width))
                .zip(inv_rms.iter_mut())
            {
                let mean_square = x.iter().map(|v| v * v).sum::<f32>() / width as f32;
                *inv = 1.0 / (mean_square + eps).sqrt();
                let r = *inv;
                write_row2(out, x, weight, |v, w| v * r * w);
            }
        });
    inv_rms
}

/// Gradients of [`rms_norm_into`] given its saved `inv_rms`: writes `d_x` and returns `d_weight`.
///
/// With `r` the row's inverse RMS and `h = d_out * weight`:
/// `d_x = r * (h - x * r² * mean(h * x))`, `d_weight = Σ_rows d_out * x * r`.
fn rms_norm_backward_into(
    x: &[f32],
    weight: &[f32],
    inv_rms: &[f32],
    d_out: &[f32],
    d_x: &mut [MaybeUninit<f32>],
) -> Vec<f32> {
    let width = weight.len();
    check_len(d_x, x.len());
    assert_eq!(x.len() % width.max(1), 0, "rms_norm_backward: whole rows");
    let rows = rows_per_task(width);
    let chunk = rows * width;
    d_x.par_chunks_mut(chunk)
        .zip(x.par_chunks(chunk))
        .zip(d_out.par_chunks(chunk))
        .zip(inv_rms.par_chunks(rows))
        .map(|(((d_x, x), d_out), inv_rms)| {
            let mut d_weight = vec![0.0f32; width];
            for (((d_x, x), d_out), &r) in d_x
                .chunks_exact_mut(width)
                .zip(x.chunks_exact(width))
                .zip(d_out.chunks_exact(width))
                .zip(inv_rms)
            {
                let mut dot = 0.0f32;
                for i in 0..width {
                    dot += d_out[i] * weight[i] * x[i];
                    d_weight[i] += d_out[i] * x[i] * r;
                }
                let correction = r * r * dot / width as f32;
                write_row3(d_x, [d_out, weight, x], |d, w, v| {
                    r * (d * w - v * correction)
                });
            }
            d_weight
        })
        .collect::<Vec<_>>()
        .into_iter()
        .fold(vec![0.0f32; width], |mut total, part| {
            total.iter_mut().zip(part).for_each(|(t, p)| *t += p);
            total
        })
}

/// Row softmax of `x + bias` (`bias`, when given, has `x`'s layout).
fn softmax_into(x: &[f32], bias: Option<&[f32]>, width: usize, out: &mut [MaybeUninit<f32>]) {
    check_len(out, x.len());
    assert_eq!(x.len() % width.max(1), 0, "softmax: whole rows");
    let chunk = rows_per_task(width) * width;
    out.par_chunks_mut(chunk)
        .enumerate()
        .for_each(|(task, out)| {
            let start = task * chunk;
            let x = &x[start..start + out.len()];
            let bias = bias.map(|bias| &bias[start..start + out.len()]);
            for (row, out) in out.chunks_exact_mut(width).enumerate() {
                let span = row * width..(row + 1) * width;
                let x = &x[span.clone()];
                let out = match bias {
                    Some(bias) => write_row2(out, x, &bias[span], |v, b| v + b),
                    None => write_row1(out, x, |v| v),
                };
                let max = max_of(out, |v| v);
                out.iter_mut().for_each(|o| *o = exp(*o - max));
                let sum: f32 = out.iter().sum();
                let inv = 1.0 / sum;
                out.iter_mut().for_each(|o| *o *= inv);
            }
        });
}

/// Gradient of a row softmax from its output `y`: `d_x = y * (d_y - Σ d_y * y)`.
fn softmax_backward_into(y: &[f32], d_y: &[f32], width: usize, d_x: &mut [MaybeUninit<f32>]) {
    check_len(d_x, y.len());
    assert_eq!(y.len() % width.max(1), 0, "softmax_backward: whole rows");
    let chunk = rows_per_task(width) * width;
    d_x.par_chunks_mut(chunk)
        .zip(y.par_chunks(chunk))
        .zip(d_y.par_chunks(chunk))
        .for_each(|((d_x, y), d_y)| {
            for ((d_x, y), d_y) in d_x
                .chunks_exact_mut(width)
                .zip(y.chunks_exact(width))
                .zip(d_y.chunks_exact(width))
            {
                let dot: f32 = y.iter().zip(d_y).map(|(a, b)| a * b).sum();
                write_row2(d_x, y, d_y, |y, g| y * (g - dot));
            }
        });
}

/// Rows of logits `l` with one target id each, scored at `z = scale * l` (`scale` is one over
/// the sampling temperature).
pub(crate) struct ScoreRows<'a> {
    /// `[rows, width]` logits.
    pub(crate) logits: &'a [f32],
    /// One target id per row, below `width`.
    pub(crate) targets: &'a [u32],
    /// Vocabulary size.
    pub(crate) width: usize,
    /// Multiplies the logits first.
    pub(crate) scale: f32,
}

impl ScoreRows<'_> {
    /// `[log_softmax(z)[t], entropy(softmax(z))]` per row into `out` (two values per row);
    /// returns each row's log-sum-exp of `z` for [`Self::backward_into`].
    fn forward_into(&self, out: &mut [MaybeUninit<f32>]) -> Vec<f32> {
        let (width, scale) = (self.width, self.scale);
        check_len(out, 2 * self.targets.len());
        assert_eq!(
            self.logits.len(),
            width * self.targets.len(),
            "one logit row per target"
        );
        let rows = rows_per_task(width);
        let mut log_sum_exp = vec![0.0f32; self.targets.len()];
        out.par_chunks_mut(2 * rows)
            .zip(log_sum_exp.par_chunks_mut(rows))
            .zip(self.logits.par_chunks(rows * width))
            .zip(self.targets.par_chunks(rows))
            .for_each(|(((out, log_sum_exp), logits), targets)| {
                let mut e = vec![0.0f32; width];
                for (((out, lse), row), &target) in out
                    .chunks_exact_mut(2)
                    .zip(log_sum_exp.iter_mut())
                    .zip(logits.chunks_exact(width))
                    .zip(targets)
                {
                    let max = max_of(row, |v| scale * v);
                    for (e, &v) in e.iter_mut().zip(row) {
                        *e = exp(scale * v - max);
                    }
                    let sum: f32 = e.iter().sum();
                    let weighted: f32 = e.iter().zip(row).map(|(e, &v)| e * scale * v).sum();
                    *lse = max + sum.ln();
                    let scores = [scale * row[target as usize] - *lse, *lse - weighted / sum];
                    write_row1(out, &scores, |v| v);
                }
            });
        log_sum_exp
    }

    /// Gradient with respect to the logits, from the gradients of both outputs (`d_out`, two
    /// per row), the forward's `scores` and its log-sum-exp:
    /// `d_z_j = g_logp * (1[j = t] - p_j) - g_entropy * p_j * (log p_j + H)`, `d_l = scale * d_z`.
    fn backward_into(
        &self,
        log_sum_exp: &[f32],
        scores: &[f32],
        d_out: &[f32],
        d_logits: &mut [MaybeUninit<f32>],
    ) {
        let (width, scale) = (self.width, self.scale);
        check_len(d_logits, self.logits.len());
        assert_eq!(
            self.logits.len(),
            width * self.targets.len(),
            "one logit row per target"
        );
        let rows = rows_per_task(width);
        d_logits
            .par_chunks_mut(rows * width)
            .zip(self.logits.par_chunks(rows * width))
            .zip(
                self.targets
                    .par_chunks(rows)
                    .zip(log_sum_exp.par_chunks(rows)),
            )
            .zip(scores.par_chunks(2 * rows).zip(d_out.par_chunks(2 * rows)))
            .for_each(|(((d_logits, logits), (targets, lses)), (scores, d_out))| {
                for (row, (d_row, l_row)) in d_logits
                    .chunks_exact_mut(width)
                    .zip(logits.chunks_exact(width))
                    .enumerate()
                {
                    let (g_logp, g_entropy) = (d_out[2 * row], d_out[2 * row + 1]);
                    let (lse, entropy) = (lses[row], scores[2 * row + 1]);
                    let d_row = write_row1(d_row, l_row, |l| {
                        let log_p = scale * l - lse;
                        let p = exp(log_p);
                        scale * (-g_logp * p - g_entropy * p * (log_p + entropy))
                    });
                    d_row[targets[row] as usize] += scale * g_logp;
                }
            });
    }
}

/// Rotary tables for a head layout: per row, cosines and signed sines (`[-sin, sin]`), so that
/// `rotate(x)_j = x_j * cos_j + x_(j + half) * sin_j` (indices modulo the row width).
#[derive(Clone, Copy)]
pub(crate) struct Rope<'a> {
    /// Cosines, one row per output row.
    pub(crate) cos: &'a [f32],
    /// Signed sines, one row per output row.
    pub(crate) sin: &'a [f32],
}

/// Moves rows of `dim` values from `src`, laid out `[n, q, p, dim]`, to `dst`, laid out
/// `[n, p, q, dim]` (the two middle axes swapped), rotating each row when `rope` is given.
///
/// With `transpose` false the tables are in `dst`'s layout and rows are rotated; with
/// `transpose` true they are in `src`'s layout and rows get the transposed rotation (the
/// backward pass of the forward move): `out_k = g_k * cos_k + g_(k + half) * sin_(k + half)`.
fn swap_middle_into(
    src: &[f32],
    [_, p, q, dim]: [usize; 4],
    rope: Option<Rope<'_>>,
    transpose: bool,
    dst: &mut [MaybeUninit<f32>],
) {
    check_len(dst, src.len());
    assert_eq!(src.len() % dim.max(1), 0, "swap_middle: whole rows");
    let half = dim / 2;
    let rows = rows_per_task(dim);
    dst.par_chunks_mut(rows * dim)
        .enumerate()
        .for_each(|(task, chunk)| {
            for (offset, out) in chunk.chunks_exact_mut(dim).enumerate() {
                let row = task * rows + offset;
                let (batch, i, j) = (row / (p * q), (row / q) % p, row % q);
                let src_row = (batch * q + j) * p + i;
                let input = &src[src_row * dim..(src_row + 1) * dim];
                let Some(rope) = rope else {
                    write_row1(out, input, |v| v);
                    continue;
                };
                debug_assert_eq!(dim % 2, 0, "rotary rows have an even width");
                let table = if transpose { src_row } else { row } * dim;
                let cos = &rope.cos[table..table + dim];
                let sin = &rope.sin[table..table + dim];
                // Element k pairs with k ± half; in halves, each loop is straight-line (and
                // vectorised): forward `out_k = x_k cos_k + x_other sin_k`, transposed
                // `out_k = g_k cos_k + g_other sin_other`.
                let (in_low, in_high) = input.split_at(half);
                let (sin_low, sin_high) = sin.split_at(half);
                let (sin_for_low, sin_for_high) = if transpose {
                    (sin_high, sin_low)
                } else {
                    (sin_low, sin_high)
                };
                let (out_low, out_high) = out.split_at_mut(half);
                let (cos_low, cos_high) = cos.split_at(half);
                rotate_half(out_low, in_low, cos_low, in_high, sin_for_low);
                rotate_half(out_high, in_high, cos_high, in_low, sin_for_high);
            }
        });
}

/// `out_k = x_k * cos_k + other_k * sin_k` over one half of a rotated row.
#[inline(always)]
fn rotate_half(out: &mut [MaybeUninit<f32>], x: &[f32], cos: &[f32], other: &[f32], sin: &[f32]) {
    write_row4(out, [x, cos, other, sin], |x, cos, other, sin| {
        x * cos + other * sin
    });
}

/// `silu(gate) * up`, elementwise, in a new buffer.
pub(crate) fn silu_mul(gate: &[f32], up: &[f32]) -> Vec<f32> {
    // SAFETY: `silu_mul_into` writes every element of an output as long as `gate`.
    #[allow(unsafe_code)]
    let (out, ()) = unsafe { written_by(gate.len(), |out| silu_mul_into(gate, up, out)) };
    out
}

/// `(d_gate, d_up)` of [`silu_mul`] (see [`silu_mul_backward_into`]).
pub(crate) fn silu_mul_backward(gate: &[f32], up: &[f32], d_out: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let len = gate.len();
    // SAFETY: `silu_mul_backward_into` writes every element of both outputs, each as long as
    // `gate`.
    #[allow(unsafe_code)]
    let (d_gate, (d_up, ())) = unsafe {
        written_by(len, |d_gate| {
            written_by(len, |d_up| {
                silu_mul_backward_into(gate, up, d_out, d_gate, d_up)
            })
        })
    };
    (d_gate, d_up)
}

/// RMSNorm of each row in a new buffer, and each row's inverse RMS (see [`rms_norm_into`]).
pub(crate) fn rms_norm(x: &[f32], weight: &[f32], eps: f32) -> (Vec<f32>, Vec<f32>) {
    // SAFETY: `rms_norm_into` writes every element of an output as long as `x`.
    #[allow(unsafe_code)]
    unsafe {
        written_by(x.len(), |out| rms_norm_into(x, weight, eps, out))
    }
}

/// `(d_x, d_weight)` of [`rms_norm`] (see [`rms_norm_backward_into`]).
pub(crate) fn rms_norm_backward(
    x: &[f32],
    weight: &[f32],
    inv_rms: &[f32],
    d_out: &[f32],
) -> (Vec<f32>, Vec<f32>) {
    // SAFETY: `rms_norm_backward_into` writes every element of a `d_x` as long as `x`.
    #[allow(unsafe_code)]
    unsafe {
        written_by(x.len(), |d_x| {
            rms_norm_backward_into(x, weight, inv_rms, d_out, d_x)
        })
    }
}

/// Row softmax of `x + bias` in a new buffer (see [`softmax_into`]).
pub(crate) fn softmax(x: &[f32], bias: Option<&[f32]>, width: usize) -> Vec<f32> {
    // SAFETY: `softmax_into` writes every element of an output as long as `x`.
    #[allow(unsafe_code)]
    let (out, ()) = unsafe { written_by(x.len(), |out| softmax_into(x, bias, width, out)) };
    out
}

/// Gradient of a row softmax from its output `y`, in a new buffer (see
/// [`softmax_backward_into`]).
pub(crate) fn softmax_backward(y: &[f32], d_y: &[f32], width: usize) -> Vec<f32> {
    // SAFETY: `softmax_backward_into` writes every element of an output as long as `y`.
    #[allow(unsafe_code)]
    let (d_x, ()) = unsafe { written_by(y.len(), |d_x| softmax_backward_into(y, d_y, width, d_x)) };
    d_x
}

impl ScoreRows<'_> {
    /// `[log_softmax(z)[t], entropy(softmax(z))]` per row in a new buffer, and each row's
    /// log-sum-exp (see [`Self::forward_into`]).
    pub(crate) fn forward(&self) -> (Vec<f32>, Vec<f32>) {
        // SAFETY: `forward_into` writes both values of every row of an output of two per target.
        #[allow(unsafe_code)]
        unsafe {
            written_by(2 * self.targets.len(), |out| self.forward_into(out))
        }
    }

    /// Gradient with respect to the logits, in a new buffer (see [`Self::backward_into`]).
    pub(crate) fn backward(&self, log_sum_exp: &[f32], scores: &[f32], d_out: &[f32]) -> Vec<f32> {
        // SAFETY: `backward_into` writes every element of an output as long as the logits.
        #[allow(unsafe_code)]
        let (d_logits, ()) = unsafe {
            written_by(self.logits.len(), |d_logits| {
                self.backward_into(log_sum_exp, scores, d_out, d_logits)
            })
        };
        d_logits
    }
}

/// [`swap_middle_into`] into a new buffer.
pub(crate) fn swap_middle(
    src: &[f32],
    dims: [usize; 4],
    rope: Option<Rope<'_>>,
    transpose: bool,
) -> Vec<f32> {
    // SAFETY: `swap_middle_into` writes every element of an output as long as `src`.
    #[allow(unsafe_code)]
    let (dst, ()) = unsafe {
        written_by(src.len(), |dst| {
            swap_middle_into(src, dims, rope, transpose, dst)
        })
    };
    dst
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The RMSNorm weight gradient adds its per-task partial sums in task order, so its bits do
    /// not depend on which thread runs what: called from inside a pool (where rayon's pairing of
    /// a `reduce` follows work stealing) and from outside, with two and three threads, it equals
    /// the partial sums added left to right.
    #[test]
    fn rms_norm_weight_gradient_is_the_same_however_tasks_are_scheduled() {
        let width = 64;
        let rows = 64 * rows_per_task(width) + 7;
        let value =
            |i: usize, salt: usize| ((i * 7919 + salt * 104_729) % 2001) as f32 / 1000.0 - 1.0;
        let x: Vec<f32> = (0..rows * width).map(|i| value(i, 1)).collect();
        let d_out: Vec<f32> = (0..rows * width).map(|i| value(i, 2)).collect();
        let weight: Vec<f32> = (0..width).map(|i| 0.5 + value(i, 3)).collect();
        let inv_rms: Vec<f32> = (0..rows).map(|r| 0.8 + value(r, 4) * 0.1).collect();
        let per_task = rows_per_task(width);
        let mut expected = vec![0.0f32; width];
        for (task_x, (task_d, task_r)) in x
            .chunks(per_task * width)
            .zip(d_out.chunks(per_task * width).zip(inv_rms.chunks(per_task)))
        {
            let mut part = vec![0.0f32; width];
            for ((x, d), &r) in task_x
                .chunks_exact(width)
                .zip(task_d.chunks_exact(width))
                .zip(task_r)
            {
                for i in 0..width {
                    part[i] += d[i] * x[i] * r;
                }
            }
            expected.iter_mut().zip(part).for_each(|(t, p)| *t += p);
        }
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        let outside = rms_norm_backward(&x, &weight, &inv_rms, &d_out).1;
        assert_eq!(bits(&outside), bits(&expected));
        for threads in [2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a rayon pool");
            for _ in 0..20 {
                let inside = pool.install(|| rms_norm_backward(&x, &weight, &inv_rms, &d_out).1);
                assert_eq!(bits(&inside), bits(&expected), "{threads} threads");
            }
        }
    }

    #[test]
    fn exp_matches_the_c_library_within_a_few_ulps() {
        let mut worst = 0.0f32;
        for i in -80_000..=80_000 {
            let x = i as f32 / 1000.0;
            let (fast, libm) = (exp(x), x.exp());
            worst = worst.max(((fast - libm) / libm).abs());
        }
        assert!(worst < 4e-7, "worst relative error {worst}");
        assert_eq!(exp(-1000.0), 0.0);
        assert!(exp(-86.4).is_normal());
        assert!(exp(f32::NAN).is_nan());
    }

    #[test]
    fn an_output_row_is_written_in_full_or_refused() {
        let mut row = [MaybeUninit::new(9.0f32); 3];
        assert_eq!(
            write_row2(&mut row, &[1.0, 2.0, 3.0], &[0.5, 0.5, 0.5], |a, b| a + b),
            [1.5, 2.5, 3.5]
        );
        let short = std::panic::catch_unwind(move || {
            let mut row = [MaybeUninit::<f32>::uninit(); 3];
            write_row1(&mut row, &[1.0, 2.0], |v| v).len()
        });
        assert!(
            short.is_err(),
            "an input shorter than the output row is a bug, not data"
        );
    }

    #[test]
    fn token_scores_match_a_direct_computation() {
        let logits = [0.5f32, -1.0, 2.0, 0.0, 3.0, 1.0];
        let rows = ScoreRows {
            logits: &logits,
            targets: &[2, 0],
            width: 3,
            scale: 0.5,
        };
        let (out, lse) = rows.forward();
        for (row, target) in [(0usize, 2usize), (1, 0)] {
            let z: Vec<f32> = logits[row * 3..row * 3 + 3]
                .iter()
                .map(|v| 0.5 * v)
                .collect();
            let norm = z.iter().map(|v| v.exp()).sum::<f32>().ln();
            let entropy: f32 = z.iter().map(|v| -(v - norm).exp() * (v - norm)).sum();
            assert!((lse[row] - norm).abs() < 1e-6);
            assert!((out[2 * row] - (z[target] - norm)).abs() < 1e-6);
            assert!((out[2 * row + 1] - entropy).abs() < 1e-6);
        }
    }
}
