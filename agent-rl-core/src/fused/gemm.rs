//! A safe front to the `gemm` crate's matrix product (the kernels burn's CPU backend runs), over
//! strided views of `f32` buffers, writing into caller-owned memory or a new, never zeroed
//! buffer.

use std::mem::MaybeUninit;

/// A read-only, strided `rows x cols` matrix in a buffer: element `(i, j)` is
/// `data[offset + i * row_stride + j * col_stride]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MatRef<'a> {
    data: &'a [f32],
    offset: usize,
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a> MatRef<'a> {
    /// A view of `data`; panics when it would reach past the buffer (a bug in the caller).
    pub(crate) fn new(
        data: &'a [f32],
        offset: usize,
        [rows, cols]: [usize; 2],
        [row_stride, col_stride]: [usize; 2],
    ) -> Self {
        let last = (rows.max(1) - 1) * row_stride + (cols.max(1) - 1) * col_stride;
        assert!(
            rows == 0 || cols == 0 || offset + last < data.len(),
            "matrix view reaches past its buffer"
        );
        Self {
            data,
            offset,
            rows,
            cols,
            row_stride,
            col_stride,
        }
    }

    /// A row-major matrix filling `data`.
    pub(crate) fn row_major(data: &'a [f32], rows: usize, cols: usize) -> Self {
        Self::new(data, 0, [rows, cols], [cols, 1])
    }

    /// The transpose (a view; nothing moves).
    pub(crate) fn t(self) -> Self {
        Self {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// Rows.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// Columns.
    pub(crate) fn cols(&self) -> usize {
        self.cols
    }
}

/// Products at least this large (`m * n * k`) split over rayon's threads.
const PARALLEL_PRODUCT: usize = 192 * 192 * 192;

/// `dst` (row-major `lhs.rows x rhs.cols`) `= lhs · rhs`, or `+= lhs · rhs` when `accumulate`.
/// `threads`: whether the product may use rayon's threads (false inside a parallel loop).
pub(crate) fn matmul_into(
    dst: &mut [f32],
    lhs: MatRef<'_>,
    rhs: MatRef<'_>,
    accumulate: bool,
    threads: bool,
) {
    // SAFETY: an `f32` slice is a slice of initialised `MaybeUninit<f32>`, and a product only
    // ever writes initialised values into it.
    #[allow(unsafe_code)]
    let dst = unsafe { &mut *(std::ptr::from_mut(dst) as *mut [MaybeUninit<f32>]) };
    product(dst, lhs, rhs, accumulate, threads);
}

/// `dst` (row-major `lhs.rows x rhs.cols`, contents unread) `= lhs · rhs`: every element is
/// written. `threads` as for [`matmul_into`].
pub(crate) fn matmul_uninit(
    dst: &mut [MaybeUninit<f32>],
    lhs: MatRef<'_>,
    rhs: MatRef<'_>,
    threads: bool,
) {
    product(dst, lhs, rhs, false, threads);
}

/// A new row-major `lhs.rows x rhs.cols` matrix `lhs · rhs`, allocated without first zeroing it
/// (burn-flex's products zero every output; in a GRPO step the memset cost about 6% of the step).
pub(crate) fn matmul_new(lhs: MatRef<'_>, rhs: MatRef<'_>, threads: bool) -> Vec<f32> {
    let len = lhs.rows * rhs.cols;
    let mut out = Vec::with_capacity(len);
    matmul_uninit(&mut out.spare_capacity_mut()[..len], lhs, rhs, threads);
    // SAFETY: `matmul_uninit` wrote all `len` elements, and the capacity is at least `len`.
    #[allow(unsafe_code)]
    unsafe {
        out.set_len(len)
    };
    out
}

/// The one product every entry point goes through; `dst` must be initialised when
/// `accumulate`, and every element is initialised afterwards.
fn product(
    dst: &mut [MaybeUninit<f32>],
    lhs: MatRef<'_>,
    rhs: MatRef<'_>,
    accumulate: bool,
    threads: bool,
) {
    let (m, k, n) = (lhs.rows, lhs.cols, rhs.cols);
    assert_eq!(k, rhs.rows, "matmul: inner dimensions differ");
    assert_eq!(dst.len(), m * n, "matmul: destination size");
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            dst.fill(MaybeUninit::new(0.0));
        }
        return;
    }
    let parallelism = if threads && m * n * k >= PARALLEL_PRODUCT {
        gemm::Parallelism::Rayon(0)
    } else {
        gemm::Parallelism::None
    };
    let stride = |s: usize| s as isize;
    // SAFETY: `MatRef::new` checked that every element of both views lies inside its buffer,
    // `dst` holds exactly `m * n` elements addressed row-major (row stride `n`, column stride
    // 1) and is a unique borrow, so it overlaps neither input. `gemm` reads `dst` only when
    // `accumulate` (its `read_dst`), and then the caller has initialised it; it writes every
    // element.
    #[allow(unsafe_code)]
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr().cast::<f32>(),
            1,
            stride(n),
            accumulate,
            lhs.data.as_ptr().add(lhs.offset),
            stride(lhs.col_stride),
            stride(lhs.row_stride),
            rhs.data.as_ptr().add(rhs.offset),
            stride(rhs.col_stride),
            stride(rhs.row_stride),
            1.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_products_match_a_direct_sum() {
        // lhs: 2x3 row-major; rhs: the transpose of a 2x3 row-major buffer (3x2).
        let lhs = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let rhs = [1.0f32, 0.0, -1.0, 2.0, 1.0, 0.5];
        let mut out = [10.0f32; 4];
        matmul_into(
            &mut out,
            MatRef::row_major(&lhs, 2, 3),
            MatRef::row_major(&rhs, 2, 3).t(),
            true,
            false,
        );
        assert_eq!(out, [10.0 - 2.0, 10.0 + 5.5, 10.0 - 2.0, 10.0 + 16.0]);
    }

    #[test]
    fn new_products_are_fully_written() {
        let lhs: Vec<f32> = (0..6).map(|i| i as f32).collect();
        let rhs: Vec<f32> = (0..12).map(|i| (i as f32) * 0.5 - 2.0).collect();
        let fresh = matmul_new(
            MatRef::row_major(&lhs, 2, 3),
            MatRef::row_major(&rhs, 3, 4),
            true,
        );
        let mut zeroed = vec![0.0f32; 8];
        matmul_into(
            &mut zeroed,
            MatRef::row_major(&lhs, 2, 3),
            MatRef::row_major(&rhs, 3, 4),
            false,
            false,
        );
        assert_eq!(fresh, zeroed);
        let empty = matmul_new(
            MatRef::row_major(&[], 2, 0),
            MatRef::row_major(&[], 0, 4),
            true,
        );
        assert_eq!(empty, [0.0; 8]);
    }
}
