//! The numeric kernels of the encoder: matrix products and the element-wise
//! passes between them.
//!
//! This is the one audited place where the workspace allows `unsafe`. It
//! holds exactly three kinds of it:
//! - the call into `gemm-f32`, which takes raw pointers and strides. [`matmul`]
//!   checks every index the product can touch against the slices' lengths
//!   first, and Rust's borrows keep the output apart from the inputs;
//! - calls into this module's own copies of the element-wise passes compiled
//!   for AVX-512 or AVX2, made only after the CPU was seen to have them;
//! - the bf16 and int8 products' SIMD intrinsics ([`bf16`], [`int8`]),
//!   behind safe functions that check the shapes and the CPU first.
//!
//! The element-wise passes are written so that the compiler vectorises them:
//! no branches in the loops, and sums kept in 16 independent lanes (a float
//! sum is otherwise computed in order, one element at a time).

pub mod bf16;
pub mod int8;

pub use gemm_common::Parallelism;

/// A matrix inside a slice: element (r, c) is `data[r * row_stride + c * col_stride]`.
#[derive(Clone, Copy)]
pub struct Matrix<'a> {
    pub data: &'a [f32],
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

/// The same for the output of a product.
pub struct MatrixMut<'a> {
    pub data: &'a mut [f32],
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

impl Matrix<'_> {
    fn in_bounds(&self) -> bool {
        fits(
            self.data.len(),
            self.rows,
            self.cols,
            self.row_stride,
            self.col_stride,
        )
    }

    /// A row-major matrix of `cols` columns filling `data` from its start.
    pub fn rows(data: &[f32], rows: usize, cols: usize) -> Matrix<'_> {
        Matrix {
            data,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }
}

impl MatrixMut<'_> {
    /// The same matrix, read-only.
    fn view(&self) -> Matrix<'_> {
        Matrix {
            data: self.data,
            rows: self.rows,
            cols: self.cols,
            row_stride: self.row_stride,
            col_stride: self.col_stride,
        }
    }

    pub fn rows(data: &mut [f32], rows: usize, cols: usize) -> MatrixMut<'_> {
        MatrixMut {
            data,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }
}

/// Whether every element of a `rows × cols` matrix with these strides lies in
/// `len` elements.
fn fits(len: usize, rows: usize, cols: usize, row_stride: usize, col_stride: usize) -> bool {
    if rows == 0 || cols == 0 {
        return true;
    }
    let last = (rows - 1).checked_mul(row_stride).and_then(|r| {
        (cols - 1)
            .checked_mul(col_stride)
            .and_then(|c| r.checked_add(c))
    });
    last.is_some_and(|last| last < len)
}

/// `out = a · b`, or `out += a · b` when `accumulate` (the output then holds,
/// say, a bias or a residual to add to).
///
/// # Panics
/// When the shapes disagree or a matrix does not fit in its slice: a bug in
/// the caller, never a property of the input text.
pub fn matmul(
    out: MatrixMut<'_>,
    accumulate: bool,
    a: Matrix<'_>,
    b: Matrix<'_>,
    threads: Parallelism,
) {
    assert_eq!(a.cols, b.rows, "inner dimensions");
    assert_eq!((out.rows, out.cols), (a.rows, b.cols), "output shape");
    assert!(
        a.in_bounds() && b.in_bounds() && out.view().in_bounds(),
        "a matrix outside its slice"
    );
    if out.rows == 0 || out.cols == 0 {
        return;
    }
    let stride = |s: usize| s as isize;
    // The kernels want a column-major output: a row-major one is computed
    // as the transposed product, out' = b' · a', the inputs' strides swapped.
    let (m, n, out_cs, out_rs, lhs, lhs_cs, lhs_rs, rhs, rhs_cs, rhs_rs) =
        match out.col_stride < out.row_stride {
            true => (
                out.cols,
                out.rows,
                out.row_stride,
                out.col_stride,
                b.data.as_ptr(),
                b.row_stride,
                b.col_stride,
                a.data.as_ptr(),
                a.row_stride,
                a.col_stride,
            ),
            false => (
                out.rows,
                out.cols,
                out.col_stride,
                out.row_stride,
                a.data.as_ptr(),
                a.col_stride,
                a.row_stride,
                b.data.as_ptr(),
                b.col_stride,
                b.row_stride,
            ),
        };
    // SAFETY: the asserts above keep every element gemm reads or writes inside
    // the three slices (the transposition reads the same elements); `out` is
    // borrowed mutably, so it cannot overlap `a` or `b`; gemm reads `out`
    // only when `accumulate` (read_dst), and then it is initialised memory of
    // a slice.
    #[allow(unsafe_code)]
    unsafe {
        gemm_f32::gemm::f32::get_gemm_fn()(
            m,
            n,
            a.cols,
            out.data.as_mut_ptr(),
            stride(out_cs),
            stride(out_rs),
            accumulate,
            lhs,
            stride(lhs_cs),
            stride(lhs_rs),
            rhs,
            stride(rhs_cs),
            stride(rhs_rs),
            1.0,
            1.0,
            false,
            false,
            false,
            threads,
        );
    }
}

/// Runs an element-wise pass compiled for the best instruction set this CPU
/// has: the same source, vectorised 16, 8 or 4 lanes wide.
macro_rules! dispatch {
    ($(#[$doc:meta])* pub fn $name:ident($($arg:ident: $ty:ty),*) $body:block) => {
        $(#[$doc])*
        pub fn $name($($arg: $ty),*) {
            #[inline(always)]
            fn portable($($arg: $ty),*) $body

            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
                fn avx512($($arg: $ty),*) { portable($($arg),*) }
                #[target_feature(enable = "avx2,fma")]
                fn avx2($($arg: $ty),*) { portable($($arg),*) }

                if std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                {
                    // SAFETY: the CPU has every feature the function is compiled for.
                    #[allow(unsafe_code)]
                    return unsafe { avx512($($arg),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                {
                    // SAFETY: as above.
                    #[allow(unsafe_code)]
                    return unsafe { avx2($($arg),*) };
                }
            }
            portable($($arg),*)
        }
    };
}

const LANES: usize = 16;

#[inline(always)]
fn sum(values: &[f32]) -> f32 {
    let mut lanes = [0f32; LANES];
    let chunks = values.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, v) in lanes.iter_mut().zip(chunk) {
            *lane += v;
        }
    }
    lanes.iter().sum::<f32>() + rest.iter().sum::<f32>()
}

#[inline(always)]
fn max(values: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let chunks = values.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, &v) in lanes.iter_mut().zip(chunk) {
            *lane = if v > *lane { v } else { *lane };
        }
    }
    lanes
        .iter()
        .chain(rest)
        .fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m })
}

/// e^x, within 2 ulp over the range the model produces, without a branch
/// (Cephes' polynomial on the reduced argument, scaled by 2^n through the
/// exponent bits).
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // Adding 1.5 × 2^23 rounds a float of magnitude below 2^22 to an integer,
    // which then sits in the low bits of the sum.
    const ROUND: f32 = 12_582_912.0;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Compare and select, not `f32::clamp`: its check of the bounds stays
    // in the loop as a possible panic, and no loop calling it vectorises.
    let x = if x < -87.0 { -87.0 } else { x };
    let x = if x > 88.0 { 88.0 } else { x };
    let shifted = x * std::f32::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let mut p = 1.987_569_2e-4;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let y = p * r * r + r + 1.0;
    // Wrapping: the bounds above keep it in range, and a checked sum (as
    // test builds make) would keep the loops calling it from vectorising.
    let exponent = (shifted.to_bits() as i32)
        .wrapping_sub(ROUND.to_bits() as i32)
        .wrapping_add(127)
        << 23;
    y * f32::from_bits(exponent as u32)
}

/// The error function, within 5e-7 (Abramowitz and Stegun 7.1.26: 1.5e-7, plus
/// rounding in f32).
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_8 + t * (-1.453_152 + t * 1.061_405_4))));
    (1.0 - poly * exp(-a * a)).copysign(x)
}

dispatch! {
    /// Each row of `rows` (of `width` values) becomes its softmax.
    pub fn softmax_rows(rows: &mut [f32], width: usize) {
        for row in rows.chunks_exact_mut(width) {
            let top = max(row);
            for v in row.iter_mut() {
                *v = exp(*v - top);
            }
            let scale = 1.0 / sum(row);
            for v in row.iter_mut() {
                *v *= scale;
            }
        }
    }
}

dispatch! {
    /// GELU as BERT defines it, with the exact error function:
    /// x · ½ · (1 + erf(x / √2)).
    pub fn gelu(values: &mut [f32]) {
        for v in values.iter_mut() {
            *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
        }
    }
}

dispatch! {
    /// Layer normalisation of each row of `rows`, in place: zero mean and unit
    /// variance, then scaled by `gamma` and shifted by `beta`.
    pub fn layer_norm(rows: &mut [f32], gamma: &[f32], beta: &[f32], epsilon: f32) {
        let width = gamma.len();
        for row in rows.chunks_exact_mut(width) {
            let mean = sum(row) / width as f32;
            for v in row.iter_mut() {
                *v -= mean;
            }
            let mut squares = [0f32; LANES];
            let chunks = row.chunks_exact(LANES);
            let rest: f32 = chunks.remainder().iter().map(|v| v * v).sum();
            for chunk in chunks {
                for (lane, v) in squares.iter_mut().zip(chunk) {
                    *lane += v * v;
                }
            }
            let variance = (squares.iter().sum::<f32>() + rest) / width as f32;
            let scale = 1.0 / (variance + epsilon).sqrt();
            for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
                *v = *v * scale * g + b;
            }
        }
    }
}

dispatch! {
    /// Adds `addend` (one row) to each row of `rows`.
    pub fn add_to_rows(rows: &mut [f32], addend: &[f32]) {
        for row in rows.chunks_exact_mut(addend.len()) {
            for (v, a) in row.iter_mut().zip(addend) {
                *v += a;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// erf to double precision by its Taylor series (converges fast for |x| ≤ 3).
    fn erf_reference(x: f64) -> f64 {
        let mut term = x;
        let mut total = x;
        for n in 1..200 {
            term *= -x * x / n as f64;
            total += term / (2 * n + 1) as f64;
        }
        total * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[test]
    fn exp_is_accurate_over_the_range_used() {
        let mut worst = 0f64;
        for i in -8700..=8800 {
            let x = i as f32 / 100.0;
            let exact = (x as f64).exp();
            worst = worst.max(((exp(x) as f64 - exact) / exact).abs());
        }
        assert!(worst < 3e-7, "relative error {worst}");
    }

    #[test]
    fn erf_is_accurate() {
        let mut worst = 0f64;
        for i in -300..=300 {
            let x = i as f32 / 100.0;
            worst = worst.max((erf(x) as f64 - erf_reference(x as f64)).abs());
        }
        assert!(worst < 5e-7, "absolute error {worst}");
        assert_eq!(erf(9.0), 1.0);
        assert_eq!(erf(-9.0), -1.0);
    }

    #[test]
    fn softmax_rows_sum_to_one_and_keep_order() {
        let mut rows: Vec<f32> = (0..40).map(|i| (i % 7) as f32 * 1.5 - 3.0).collect();
        rows[3] = 80.0; // far above the rest: must not overflow
        softmax_rows(&mut rows, 20);
        for row in rows.chunks(20) {
            assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        }
        assert!(rows[3] > 0.999);
        assert!(rows[22] > rows[21], "larger inputs get larger weights");
    }

    #[test]
    fn layer_norm_centres_and_scales() {
        let mut rows: Vec<f32> = (0..34).map(|i| i as f32).collect();
        let gamma = vec![2.0; 17];
        let beta = vec![1.0; 17];
        layer_norm(&mut rows, &gamma, &beta, 1e-12);
        for row in rows.chunks(17) {
            let mean = row.iter().sum::<f32>() / 17.0;
            assert!((mean - 1.0).abs() < 1e-5, "shifted by beta: {mean}");
            let variance = row.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / 17.0;
            assert!((variance - 4.0).abs() < 1e-4, "scaled by gamma: {variance}");
        }
    }

    #[test]
    fn matmul_follows_strides_and_accumulates() {
        // a: 2×3; b given as the transpose of a row-major 2×3, so 3×2.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let b_transposed = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0];
        let b = Matrix {
            data: &b_transposed,
            rows: 3,
            cols: 2,
            row_stride: 1,
            col_stride: 3,
        };
        let mut out = [10.0, 20.0, 30.0, 40.0];
        matmul(
            MatrixMut::rows(&mut out, 2, 2),
            true,
            Matrix::rows(&a, 2, 3),
            b,
            Parallelism::None,
        );
        assert_eq!(out, [14.0, 22.0, 40.0, 45.0]);
        matmul(
            MatrixMut::rows(&mut out, 2, 2),
            false,
            Matrix::rows(&a, 2, 3),
            b,
            Parallelism::None,
        );
        assert_eq!(out, [4.0, 2.0, 10.0, 5.0]);
    }

    #[test]
    #[should_panic(expected = "a matrix outside its slice")]
    fn a_matrix_outside_its_slice_is_refused() {
        let a = [1.0; 5];
        let mut out = [0.0; 4];
        matmul(
            MatrixMut::rows(&mut out, 2, 2),
            false,
            Matrix::rows(&a, 2, 3),
            Matrix::rows(&a, 3, 2),
            Parallelism::None,
        );
    }
}
