//! Matrix products with bf16 weights and inputs and f32 sums, on the CPU's
//! bf16 dot-product instruction (AVX-512 BF16: `vdpbf16ps`, 32 products per
//! instruction, twice the f32 rate, from half the bytes of weights).
//!
//! A weight is packed once, at load: each block of 16 output columns holds,
//! for each pair of inputs (2i, 2i+1), the 16 columns' two weights side by
//! side, the layout the instruction multiplies. A product converts its input
//! rows to bf16 pairs the same way, and each tile of up to 4 rows × 64
//! columns keeps its 16 sums in registers over the whole input length.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m512, __m512bh, __m512i, _mm512_add_ps, _mm512_dpbf16_ps, _mm512_loadu_ps,
    _mm512_loadu_si512, _mm512_set1_epi32, _mm512_setzero_ps, _mm512_storeu_ps,
};

/// Output columns per block: one 512-bit register of f32 sums.
const BLOCK: usize = 16;

/// Whether this CPU multiplies bf16 (AVX-512 with its BF16 extension).
pub fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// f32 to bf16, rounded to nearest even (as PyTorch converts).
pub fn to_bf16(value: f32) -> u16 {
    let bits = value.to_bits();
    if value.is_nan() {
        return 0x7fc0;
    }
    let rounding = 0x7fff + ((bits >> 16) & 1);
    (bits.wrapping_add(rounding) >> 16) as u16
}

fn pair(low: f32, high: f32) -> u32 {
    u32::from(to_bf16(low)) | (u32::from(to_bf16(high)) << 16)
}

/// A dense layer's `[inputs, outputs]` weight, packed for [`matmul`].
pub struct PackedWeight {
    /// `[outputs / 16][pairs][16]` pairs of bf16.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    data: Vec<u32>,
    inputs: usize,
    outputs: usize,
}

impl PackedWeight {
    /// Packs a row-major `[inputs, outputs]` weight. `None` when the outputs
    /// are not a whole number of blocks (no BERT model is like that).
    pub fn pack(weight: &[f32], inputs: usize, outputs: usize) -> Option<Self> {
        if !outputs.is_multiple_of(BLOCK) || weight.len() != inputs * outputs {
            return None;
        }
        let pairs = inputs.div_ceil(2);
        let at = |input: usize, output: usize| {
            if input < inputs {
                weight[input * outputs + output]
            } else {
                0.0
            }
        };
        let mut data = Vec::with_capacity(outputs * pairs);
        for block in 0..outputs / BLOCK {
            for p in 0..pairs {
                for lane in 0..BLOCK {
                    let output = block * BLOCK + lane;
                    data.push(pair(at(2 * p, output), at(2 * p + 1, output)));
                }
            }
        }
        Some(Self {
            data,
            inputs,
            outputs,
        })
    }
}

/// `out += x · W` for row-major `x` (`rows × inputs`) and `out` (`rows × outputs`).
/// `packed_x` is room for `x` converted to bf16 pairs.
///
/// # Panics
/// When the shapes disagree, or the CPU lacks AVX-512 BF16 (callers pack
/// weights only where [`supported`]).
pub fn matmul(out: &mut [f32], x: &[f32], weight: &PackedWeight, packed_x: &mut Vec<u32>) {
    let (inputs, outputs) = (weight.inputs, weight.outputs);
    assert!(inputs > 0 && x.len().is_multiple_of(inputs), "input width");
    let rows = x.len() / inputs;
    assert_eq!(out.len(), rows * outputs, "output shape");
    assert!(supported(), "the CPU has no AVX-512 BF16");
    packed_x.clear();
    for row in x.chunks_exact(inputs) {
        let mut values = row.chunks_exact(2);
        packed_x.extend(values.by_ref().map(|p| pair(p[0], p[1])));
        packed_x.extend(values.remainder().iter().map(|&v| pair(v, 0.0)));
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has AVX-512 F and BF16 (asserted above); the lengths
    // `tiles` relies on are the ones checked above and built here.
    #[allow(unsafe_code)]
    unsafe {
        tiles(
            out,
            packed_x,
            &weight.data,
            rows,
            inputs.div_ceil(2),
            outputs,
        );
    }
}

/// Every tile of the product, 4 blocks (64 columns) wide while they last,
/// then the remaining blocks; 4 rows high while they last, then the rest.
///
/// Safety: AVX-512 F and BF16 present; `x` holds `rows × pairs` pairs,
/// `weight` `outputs × pairs`, `out` `rows × outputs` values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
#[allow(unsafe_code)]
unsafe fn tiles(
    out: &mut [f32],
    x: &[u32],
    weight: &[u32],
    rows: usize,
    pairs: usize,
    outputs: usize,
) {
    let blocks = outputs / BLOCK;
    let mut block = 0;
    while block < blocks {
        let wide = (blocks - block).min(4);
        let w = &weight[block * pairs * BLOCK..];
        let mut row = 0;
        while row < rows {
            let high = (rows - row).min(4);
            let x = &x[row * pairs..];
            let out = &mut out[row * outputs + block * BLOCK..];
            // SAFETY: as this function's; the tile stays inside the slices
            // taken at its corner.
            unsafe {
                match (high, wide) {
                    (4, 4) => tile::<4, 4>(out, outputs, x, w, pairs),
                    (3, 4) => tile::<3, 4>(out, outputs, x, w, pairs),
                    (2, 4) => tile::<2, 4>(out, outputs, x, w, pairs),
                    (1, 4) => tile::<1, 4>(out, outputs, x, w, pairs),
                    (4, 3) => tile::<4, 3>(out, outputs, x, w, pairs),
                    (4, 2) => tile::<4, 2>(out, outputs, x, w, pairs),
                    (4, 1) => tile::<4, 1>(out, outputs, x, w, pairs),
                    (r, c) => {
                        for c in 0..c {
                            let w = &w[c * pairs * BLOCK..];
                            let out = &mut out[c * BLOCK..];
                            for r in 0..r {
                                tile::<1, 1>(
                                    &mut out[r * outputs..],
                                    outputs,
                                    &x[r * pairs..],
                                    w,
                                    pairs,
                                );
                            }
                        }
                    }
                }
            }
            row += high;
        }
        block += wide;
    }
}

/// One tile: `R` rows × `C` blocks of sums kept in registers over all pairs.
///
/// Safety: as [`tiles`]; `out` holds `(R − 1) × stride + C × 16` values,
/// `x` `R × pairs` pairs, `weight` `C × pairs × 16` pairs.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
#[inline]
#[allow(unsafe_code)]
unsafe fn tile<const R: usize, const C: usize>(
    out: &mut [f32],
    stride: usize,
    x: &[u32],
    weight: &[u32],
    pairs: usize,
) {
    debug_assert!(out.len() >= (R - 1) * stride + C * BLOCK);
    debug_assert!(x.len() >= R * pairs && weight.len() >= C * pairs * BLOCK);
    let mut sums = [[_mm512_setzero_ps(); C]; R];
    let x = x.as_ptr();
    let w = weight.as_ptr();
    for p in 0..pairs {
        // SAFETY: p < pairs, c < C and r < R stay inside the lengths above.
        unsafe {
            let columns: [__m512bh; C] = std::array::from_fn(|c| {
                let v: __m512i = _mm512_loadu_si512(w.add((c * pairs + p) * BLOCK).cast());
                std::mem::transmute::<__m512i, __m512bh>(v)
            });
            for (r, sums) in sums.iter_mut().enumerate() {
                let input = _mm512_set1_epi32(*x.add(r * pairs + p) as i32);
                let input = std::mem::transmute::<__m512i, __m512bh>(input);
                for (sum, column) in sums.iter_mut().zip(&columns) {
                    *sum = _mm512_dpbf16_ps(*sum, input, *column);
                }
            }
        }
    }
    for (r, sums) in sums.iter().enumerate() {
        for (c, sum) in sums.iter().enumerate() {
            // SAFETY: inside `out`, by the length above.
            unsafe {
                let at = out.as_mut_ptr().add(r * stride + c * BLOCK);
                let total: __m512 = _mm512_add_ps(_mm512_loadu_ps(at), *sum);
                _mm512_storeu_ps(at, total);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_to_bf16_is_to_nearest_even() {
        assert_eq!(to_bf16(1.0), 0x3f80);
        assert_eq!(to_bf16(-2.0), 0xc000);
        // 1 + 2^-8 lies halfway between two bf16 values: ties go to even.
        assert_eq!(to_bf16(1.0 + 1.0 / 256.0), 0x3f80);
        assert_eq!(to_bf16(1.0 + 3.0 / 256.0), 0x3f82);
    }

    /// Against an f32 product of the same bf16-rounded values, over every
    /// tile shape and an odd input width.
    #[test]
    fn matches_the_product_of_the_rounded_values() {
        if !supported() {
            eprintln!("skipped: this CPU has no AVX-512 BF16");
            return;
        }
        let round = |v: f32| f32::from_bits(u32::from(to_bf16(v)) << 16);
        for (rows, inputs, outputs) in [(1, 7, 16), (6, 33, 112), (9, 384, 64), (4, 2, 80)] {
            let x: Vec<f32> = (0..rows * inputs)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0)
                .collect();
            let w: Vec<f32> = (0..inputs * outputs)
                .map(|i| ((i * 53 % 97) as f32 - 48.0) / 40.0)
                .collect();
            let packed = PackedWeight::pack(&w, inputs, outputs).unwrap();
            let mut out = vec![1.0f32; rows * outputs];
            matmul(&mut out, &x, &packed, &mut Vec::new());
            for r in 0..rows {
                for o in 0..outputs {
                    let exact: f32 = 1.0
                        + (0..inputs)
                            .map(|i| round(x[r * inputs + i]) * round(w[i * outputs + o]))
                            .sum::<f32>();
                    let got = out[r * outputs + o];
                    assert!(
                        (got - exact).abs() <= 1e-3 * exact.abs().max(1.0),
                        "{rows}×{inputs}·{outputs}: ({r}, {o}) {got} vs {exact}"
                    );
                }
            }
        }
        assert!(
            PackedWeight::pack(&[0.0; 10], 1, 10).is_none(),
            "10 outputs are not whole blocks"
        );
    }
}
