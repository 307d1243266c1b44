//! Matrix products on burn Flex tensors through [`super::gemm`]: a linear layer and a batched
//! product over equal leading dimensions, each writing into one freshly allocated, never zeroed
//! `Vec`.
//!
//! burn-flex 0.21 allocates every product's output as zeroed bytes and then copies them into an
//! aligned buffer; in a GRPO step that allocation cost a third as much as the products.

use burn::tensor::Shape;
use burn_flex::FlexTensor;
use rayon::prelude::*;

use super::flex::{from_values, shape_of};
use super::gemm::{MatRef, matmul_into, matmul_new, matmul_uninit};

/// `x` itself when its strides are non-negative (any layout a view can take), else a
/// contiguous copy.
pub(super) fn viewable(x: &FlexTensor) -> FlexTensor {
    if x.layout().strides().iter().all(|&s| s >= 0) {
        x.clone()
    } else {
        x.to_contiguous()
    }
}

/// Number of matrices in `x` (the product of all but its last two dimensions).
fn batch_count(x: &FlexTensor) -> usize {
    let shape = shape_of(x);
    shape[..shape.num_dims() - 2].iter().product()
}

/// The `index`-th matrix (last two dimensions) of viewable `x`, leading dimensions row-major.
pub(super) fn matrix(x: &FlexTensor, index: usize) -> MatRef<'_> {
    let layout = x.layout();
    let (shape, strides) = (layout.shape(), layout.strides());
    let rank = shape.num_dims();
    let mut offset = layout.start_offset();
    let mut rest = index;
    for dim in (0..rank - 2).rev() {
        offset += (rest % shape[dim]) * strides[dim] as usize;
        rest /= shape[dim];
    }
    MatRef::new(
        x.storage::<f32>(),
        offset,
        [shape[rank - 2], shape[rank - 1]],
        [strides[rank - 2] as usize, strides[rank - 1] as usize],
    )
}

/// The values of a viewable vector.
fn vector(x: &FlexTensor) -> Vec<f32> {
    let layout = x.layout();
    let (start, stride) = (layout.start_offset(), layout.strides()[0] as usize);
    let data = x.storage::<f32>();
    (0..layout.shape()[0])
        .map(|i| data[start + i * stride])
        .collect()
}

/// `x · weight + bias` for viewable `x` `[tokens, in]`, `weight` `[in, out]`, `bias` `[out]`.
pub(super) fn linear(x: &FlexTensor, weight: &FlexTensor, bias: Option<&FlexTensor>) -> FlexTensor {
    let (x_matrix, w_matrix) = (matrix(x, 0), matrix(weight, 0));
    let (tokens, width) = (x_matrix.rows(), w_matrix.cols());
    let out = match bias {
        Some(bias) => {
            let bias = vector(bias);
            let mut out = vec![0.0f32; tokens * width];
            out.par_chunks_mut(width.max(1) * 64).for_each(|rows| {
                rows.chunks_exact_mut(width)
                    .for_each(|row| row.copy_from_slice(&bias))
            });
            matmul_into(&mut out, x_matrix, w_matrix, true, true);
            out
        }
        None => matmul_new(x_matrix, w_matrix, true),
    };
    from_values(Shape::from(vec![tokens, width]), out)
}

/// Column sums of a viewable matrix `[rows, cols]`: a bias gradient.
pub(super) fn column_sums(x: &FlexTensor) -> FlexTensor {
    let m = matrix(x, 0);
    let ones = vec![1.0f32; m.rows()];
    let out = matmul_new(MatRef::row_major(&ones, 1, m.rows()), m, true);
    from_values(Shape::from(vec![m.cols()]), out)
}

/// `a · b` per matrix for viewable `a` `[..., m, k]` and `b` `[..., k, n]` with equal leading
/// dimensions; `transpose_a`/`transpose_b` use the transposed matrices instead.
pub(super) fn batched_matmul(
    a: &FlexTensor,
    b: &FlexTensor,
    transpose_a: bool,
    transpose_b: bool,
) -> FlexTensor {
    fn pick(x: &FlexTensor, index: usize, transpose: bool) -> MatRef<'_> {
        let m = matrix(x, index);
        if transpose { m.t() } else { m }
    }
    let (first_a, first_b) = (pick(a, 0, transpose_a), pick(b, 0, transpose_b));
    let (rows, cols) = (first_a.rows(), first_b.cols());
    let count = batch_count(a);
    let len = count * rows * cols;
    let mut out = Vec::with_capacity(len);
    let spare = &mut out.spare_capacity_mut()[..len];
    if count > 1 && rows * cols > 0 {
        spare
            .par_chunks_mut(rows * cols)
            .enumerate()
            .for_each(|(index, out)| {
                let (lhs, rhs) = (pick(a, index, transpose_a), pick(b, index, transpose_b));
                matmul_uninit(out, lhs, rhs, false);
            });
    } else if count == 1 {
        matmul_uninit(spare, first_a, first_b, true);
    }
    // SAFETY: the products wrote all `len` elements (`len` is 0 when nothing was computed:
    // `count` is 0, or `rows * cols` is), and the capacity is at least `len`.
    #[allow(unsafe_code)]
    unsafe {
        out.set_len(len)
    };
    let mut dims = shape_of(a).to_vec();
    let rank = dims.len();
    dims[rank - 2] = rows;
    dims[rank - 1] = cols;
    from_values(Shape::from(dims), out)
}
