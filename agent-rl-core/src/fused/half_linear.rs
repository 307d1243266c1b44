//! A linear layer whose weight is stored in half precision (bf16 or f16) and frozen, on Flex:
//! the weight is widened to `f32` one block of output columns at a time, for the forward product
//! and for the input gradient, so the only `f32` copy of it that ever exists is one block.
//!
//! Under autodiff the graph node keeps the half-precision weight (shared with the parameter, no
//! copy) and nothing else: the weight takes no gradient, and the input gradient `d_out · Wᵀ`
//! needs only the weight. This is what lets a frozen LoRA base held in bf16 take half the memory
//! of an `f32` one during training, not only at rest.

use burn::tensor::{DType, Shape};
use burn_autodiff::checkpoint::base::Checkpointer;
use burn_autodiff::grads::Gradients;
use burn_autodiff::ops::{Backward, Ops};
use burn_flex::{Flex, FlexTensor};
use half::{bf16, f16};
use rayon::prelude::*;

use super::autodiff::{Tracked, output_grad, record};
use super::flex::from_values;
use super::gemm::{MatRef, matmul_into};
use super::products::{column_sums, matrix, viewable};

/// The `f32` copy of a weight block holds at most this many elements (16 MiB; tiny in unit
/// tests, so that they cross block boundaries).
const BLOCK_ELEMENTS: usize = if cfg!(test) { 1 << 9 } else { 1 << 22 };

/// Blocks are at least this many columns wide (narrower products run below the gemm kernels'
/// speed).
const MIN_BLOCK_WIDTH: usize = if cfg!(test) { 7 } else { 256 };

/// Whether `dtype` is one of the half-precision types this module widens.
pub(super) fn is_half(dtype: DType) -> bool {
    matches!(dtype, DType::BF16 | DType::F16)
}

/// Output columns per block for a weight with `rows` input features and `cols` outputs.
fn block_width(rows: usize, cols: usize) -> usize {
    (BLOCK_ELEMENTS / rows.max(1))
        .max(MIN_BLOCK_WIDTH)
        .min(cols.max(1))
}

/// An `f32` copy of columns `start..start + width` of a half-precision `[rows, cols]` weight
/// (any non-negative strides), and its view: row-major when the weight's rows are its contiguous
/// direction, column-major otherwise (a transposed embedding), so the copy reads memory in order.
struct WideBlock {
    values: Vec<f32>,
    rows: usize,
    width: usize,
    column_major: bool,
}

impl WideBlock {
    fn new(weight: &FlexTensor, start: usize, width: usize) -> Self {
        match weight.dtype() {
            DType::BF16 => {
                Self::widen(weight, weight.storage::<bf16>(), start, width, bf16::to_f32)
            }
            DType::F16 => Self::widen(weight, weight.storage::<f16>(), start, width, f16::to_f32),
            other => {
                unreachable!("half_linear is only reached for bf16/f16 weights, not {other:?}")
            }
        }
    }

    fn widen<T: Copy + Send + Sync>(
        weight: &FlexTensor,
        data: &[T],
        start: usize,
        width: usize,
        widen: fn(T) -> f32,
    ) -> Self {
        let layout = weight.layout();
        let (shape, strides) = (layout.shape(), layout.strides());
        let rows = shape[0];
        let (row_stride, col_stride) = (strides[0] as usize, strides[1] as usize);
        let offset = layout.start_offset() + start * col_stride;
        let mut values = vec![0.0f32; rows * width];
        let column_major = col_stride > row_stride;
        if column_major {
            values
                .par_chunks_mut(rows.max(1))
                .enumerate()
                .for_each(|(j, column)| {
                    let base = offset + j * col_stride;
                    for (i, v) in column.iter_mut().enumerate() {
                        *v = widen(data[base + i * row_stride]);
                    }
                });
        } else {
            values
                .par_chunks_mut(width.max(1))
                .enumerate()
                .for_each(|(i, row)| {
                    let base = offset + i * row_stride;
                    for (j, v) in row.iter_mut().enumerate() {
                        *v = widen(data[base + j * col_stride]);
                    }
                });
        }
        Self {
            values,
            rows,
            width,
            column_major,
        }
    }

    fn view(&self) -> MatRef<'_> {
        let strides = if self.column_major {
            [1, self.rows]
        } else {
            [self.width, 1]
        };
        MatRef::new(&self.values, 0, [self.rows, self.width], strides)
    }
}

/// The column blocks `(start, width)` of a `[rows, cols]` weight.
fn blocks(rows: usize, cols: usize) -> impl Iterator<Item = (usize, usize)> {
    let step = block_width(rows, cols);
    (0..cols)
        .step_by(step)
        .map(move |start| (start, step.min(cols - start)))
}

/// `x · weight (+ bias)` for viewable `f32` `x` `[tokens, in]`, a half-precision `weight`
/// `[in, out]` (any non-negative strides) and an `f32` `bias` `[out]`.
pub(super) fn forward(
    x: &FlexTensor,
    weight: &FlexTensor,
    bias: Option<&FlexTensor>,
) -> FlexTensor {
    let x_matrix = matrix(x, 0);
    let shape = weight.layout().shape();
    let (rows, cols) = (shape[0], shape[1]);
    let tokens = x_matrix.rows();
    let mut out = vec![0.0f32; tokens * cols];
    let mut scratch = Vec::new();
    for (start, width) in blocks(rows, cols) {
        let block = WideBlock::new(weight, start, width);
        if width == cols {
            matmul_into(&mut out, x_matrix, block.view(), false, true);
            continue;
        }
        scratch.resize(tokens * width, 0.0);
        matmul_into(&mut scratch, x_matrix, block.view(), false, true);
        out.par_chunks_mut(cols.max(1))
            .zip(scratch.par_chunks(width))
            .for_each(|(row, part)| row[start..start + width].copy_from_slice(part));
    }
    if let Some(bias) = bias {
        let bias = super::flex::values(&bias.to_contiguous()).to_vec();
        out.par_chunks_mut(cols.max(1)).for_each(|row| {
            row.iter_mut().zip(&bias).for_each(|(v, b)| *v += b);
        });
    }
    from_values(Shape::from(vec![tokens, cols]), out)
}

/// `d_out · weightᵀ` (`[tokens, in]`) for contiguous `f32` `d_out` `[tokens, out]` and a
/// half-precision `weight` `[in, out]`: the gradient of [`forward`] with respect to its input.
pub(super) fn input_grad(d_out: &FlexTensor, weight: &FlexTensor) -> FlexTensor {
    let shape = weight.layout().shape();
    let (rows, cols) = (shape[0], shape[1]);
    let d_values = super::flex::values(d_out);
    let tokens = d_values.len() / cols.max(1);
    let mut d_x = vec![0.0f32; tokens * rows];
    for (index, (start, width)) in blocks(rows, cols).enumerate() {
        let block = WideBlock::new(weight, start, width);
        let d_part = MatRef::new(d_values, start, [tokens, width], [cols, 1]);
        matmul_into(&mut d_x, d_part, block.view().t(), index > 0, true);
    }
    from_values(Shape::from(vec![tokens, rows]), d_x)
}

/// The backward step of a half-precision linear layer; the state is the frozen weight.
#[derive(Debug)]
struct HalfLinearStep;

impl<const N: usize> Backward<Flex, N> for HalfLinearStep {
    type State = FlexTensor;

    fn backward(self, ops: Ops<Self::State, N>, grads: &mut Gradients, _: &mut Checkpointer) {
        let d_out = output_grad(&ops, grads);
        if let Some(node) = &ops.parents[0] {
            grads.register::<Flex>(node.id, input_grad(&d_out, &ops.state));
        }
        if let Some(Some(node)) = ops.parents.get(2) {
            grads.register::<Flex>(node.id, column_sums(&d_out));
        }
    }
}

/// `x · weight (+ bias)` as one graph node, for a frozen (untracked) half-precision `weight`.
pub(super) fn linear(x: Tracked, weight: Tracked, bias: Option<Tracked>) -> Tracked {
    debug_assert!(
        !weight.is_tracked(),
        "half_linear: the weight must be frozen"
    );
    let x_values = viewable(&x.primitive);
    let w_values = weight.primitive.clone();
    let b_values = bias.as_ref().map(|bias| bias.primitive.clone());
    let out = forward(&x_values, &w_values, b_values.as_ref());
    match &bias {
        Some(bias) => record(HalfLinearStep, [&x, &weight, bias], || w_values, out),
        None => record(HalfLinearStep, [&x, &weight], || w_values, out),
    }
}
