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

    /// Columns `start..end` (a view).
    fn columns(self, start: usize, end: usize) -> Self {
        debug_assert!(start <= end && end <= self.cols);
        Self {
            offset: self.offset + start * self.col_stride,
            cols: end - start,
            ..self
        }
    }

    /// Rows `start..end` (a view).
    fn row_range(self, start: usize, end: usize) -> Self {
        debug_assert!(start <= end && end <= self.rows);
        Self {
            offset: self.offset + start * self.row_stride,
            rows: end - start,
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
    let large = threads && m * n * k >= PARALLEL_PRODUCT;
    if large && k >= SPLIT_INNER.max(2 * m.max(n)) && rayon::current_num_threads() > 1 {
        split_inner(dst, lhs, rhs, accumulate, rayon::current_num_threads());
        return;
    }
    let parallelism = if large {
        gemm::Parallelism::Rayon(0)
    } else {
        gemm::Parallelism::None
    };
    gemm_call(dst, lhs, rhs, accumulate, parallelism);
}

/// Inner dimensions at least this long (and at least twice the output's larger side) split over
/// threads along the inner dimension instead of the output's rows and columns.
///
/// The `gemm` crate parallelises over output blocks only. A weight gradient (`xᵀ · dy` over
/// thousands of tokens) has a small output and a long inner dimension; there `gemm`'s own
/// two-thread product ran at 74–106 GFLOP/s on this project's 2-core machine, and two
/// half-length products on one thread each, summed, at 108–131 GFLOP/s (2016 tokens, outputs
/// 256×128 to 704×704, 2026-12-06).
const SPLIT_INNER: usize = 1024;

/// The shortest inner-dimension slice [`split_inner`] makes.
const MIN_SLICE: usize = 256;

/// `dst (+)= lhs · rhs` as `parts` products over consecutive slices of the inner dimension run
/// on rayon's threads (recursively halved while the halves stay at least [`MIN_SLICE`] long),
/// each slice's product summed into `dst`. `dst` as for [`product`].
fn split_inner(
    dst: &mut [MaybeUninit<f32>],
    lhs: MatRef<'_>,
    rhs: MatRef<'_>,
    accumulate: bool,
    parts: usize,
) {
    let k = lhs.cols;
    if parts < 2 || k < 2 * MIN_SLICE {
        gemm_call(dst, lhs, rhs, accumulate, gemm::Parallelism::None);
        return;
    }
    let mid = k / 2;
    let mut upper = Vec::with_capacity(dst.len());
    let upper = &mut upper.spare_capacity_mut()[..dst.len()];
    rayon::join(
        || {
            let (lhs, rhs) = (lhs.columns(0, mid), rhs.row_range(0, mid));
            split_inner(dst, lhs, rhs, accumulate, parts / 2);
        },
        || {
            let (lhs, rhs) = (lhs.columns(mid, k), rhs.row_range(mid, k));
            split_inner(upper, lhs, rhs, false, parts - parts / 2);
        },
    );
    for (d, u) in dst.iter_mut().zip(upper.iter()) {
        // SAFETY: both halves' products initialised every element of `dst` and `upper`.
        #[allow(unsafe_code)]
        unsafe {
            d.write(d.assume_init() + u.assume_init());
        }
    }
}

/// One call of the `gemm` crate's kernel: `dst (+)= lhs · rhs`; `dst` as for [`product`].
fn gemm_call(
    dst: &mut [MaybeUninit<f32>],
    lhs: MatRef<'_>,
    rhs: MatRef<'_>,
    accumulate: bool,
    parallelism: gemm::Parallelism,
) {
    let (m, k, n) = (lhs.rows, lhs.cols, rhs.cols);
    assert!(k == rhs.rows && dst.len() == m * n, "matmul: shapes");
    let stride = |s: usize| s as isize;
    // SAFETY: `MatRef::new` checked that every element of both views lies inside its buffer
    // (the views `columns` and `row_range` take are parts of such views), `dst` holds exactly
    // `m * n` elements addressed row-major (row stride `n`, column stride 1) and is a unique
    // borrow, so it overlaps neither input. `gemm` reads `dst` only when `accumulate` (its
    // `read_dst`), and then the caller has initialised it; it writes every element.
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

    fn as_uninit(x: &mut [f32]) -> &mut [MaybeUninit<f32>] {
        // SAFETY: initialised `f32`s are initialised `MaybeUninit<f32>`s of the same layout.
        #[allow(unsafe_code)]
        unsafe {
            &mut *(std::ptr::from_mut(x) as *mut [MaybeUninit<f32>])
        }
    }

    #[test]
    fn inner_dimension_splits_sum_to_the_whole_product() {
        let (m, k, n) = (3, 1100, 5);
        let value = |i: usize| ((i * 37 % 101) as f32 - 50.0) / 50.0;
        let lhs: Vec<f32> = (0..m * k).map(value).collect();
        let rhs: Vec<f32> = (0..k * n).map(|i| value(i + 7)).collect();
        let direct: Vec<f32> = (0..m * n)
            .map(|at| {
                (0..k)
                    .map(|p| lhs[at / n * k + p] * rhs[p * n + at % n])
                    .sum::<f32>()
            })
            .collect();
        for parts in [1, 2, 3, 4] {
            for accumulate in [false, true] {
                let mut out = vec![1.0f32; m * n];
                let (a, b) = (MatRef::row_major(&lhs, m, k), MatRef::row_major(&rhs, k, n));
                split_inner(as_uninit(&mut out), a, b, accumulate, parts);
                for (got, want) in out.iter().zip(&direct) {
                    let want = want + f32::from(u8::from(accumulate));
                    assert!((got - want).abs() < 1e-3, "{parts} parts: {got} vs {want}");
                }
            }
        }
        // A transposed left side (a weight gradient's layout) splits the same way.
        let lhs_t: Vec<f32> = (0..k * m).map(|i| lhs[i % m * k + i / m]).collect();
        let a = MatRef::row_major(&lhs_t, k, m).t();
        let mut uninit = Vec::with_capacity(m * n);
        split_inner(
            &mut uninit.spare_capacity_mut()[..m * n],
            a,
            MatRef::row_major(&rhs, k, n),
            false,
            2,
        );
        // SAFETY: `split_inner` wrote every element.
        #[allow(unsafe_code)]
        unsafe {
            uninit.set_len(m * n)
        };
        let fresh = matmul_new(a, MatRef::row_major(&rhs, k, n), true);
        for ((got, fresh), want) in uninit.iter().zip(&fresh).zip(&direct) {
            assert!((got - want).abs() < 1e-3, "transposed: {got} vs {want}");
            assert!((fresh - want).abs() < 1e-3, "matmul_new: {fresh} vs {want}");
        }
    }
}
