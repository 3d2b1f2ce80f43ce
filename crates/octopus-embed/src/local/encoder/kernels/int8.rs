//! Matrix products with int8 weights and inputs and i32 sums, on the CPU's
//! int8 dot-product instruction (VNNI's `vpdpbusd`: four products of an
//! unsigned and a signed byte summed into each 32-bit lane, 64 products per
//! AVX-512 instruction, from a quarter of the bytes of f32 weights).
//!
//! A weight is quantised once, at load, per output column: the column's
//! largest magnitude becomes 127. The instruction reads its first operand
//! unsigned, so an input is quantised per row at each product onto 0 … 255
//! from its least to its greatest value (and 0), with the byte of zero its
//! row's zero point; each sum is corrected by the zero point × the sum of
//! the column's weights, kept from load. Unsigned bytes give the inputs
//! twice the steps of signed ones where they are mostly of one sign, as
//! after GELU.
//!
//! Packing follows the bf16 kernel's: each block of 16 output columns holds,
//! for each quad of inputs (4i … 4i+3), the 16 columns' four weights side by
//! side, the layout the instruction multiplies. Where the CPU has neither
//! AVX-512 VNNI nor AVX-VNNI, AVX2's `vpmaddwd` multiplies pairs of 16-bit
//! numbers exactly and adds each pair into 32 bits: the same packed bytes
//! are widened to 16 bits in registers as they are loaded (`vpmovsxbw`), so
//! that a product reads a quarter of f32's bytes on every path, which is
//! what one short question's time is spent on; each input row's bytes are
//! widened once per product. The loop is then a multiply and an add per 16
//! products, each column's two partial sums added at the end of its tile.
//! Where it has no AVX2 either, a scalar loop computes the same integers.
//! Every path gives the same floats bit for bit.
//!
//! AVX2's `vpmaddubsw` multiplies the bytes as they are, but saturates
//! pairs of products at 16 bits, which an unsigned byte's range overflows;
//! weights held to ±63 to fit it took the fixture's lowest cosine from
//! 0.997 to 0.992, and its multiplies by ones to add the pairs into 32 bits
//! cost as many multiplies as `vpmaddwd` alone.

use std::sync::atomic::{AtomicU8, Ordering};

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m256i, _mm_loadu_si128, _mm256_add_epi32, _mm256_add_ps, _mm256_cvtepi8_epi16,
    _mm256_cvtepi32_ps, _mm256_dpbusd_avx_epi32, _mm256_hadd_epi32, _mm256_loadu_ps,
    _mm256_loadu_si256, _mm256_madd_epi16, _mm256_mul_ps, _mm256_mullo_epi32,
    _mm256_permute4x64_epi64, _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_set1_ps,
    _mm256_setzero_si256, _mm256_storeu_ps, _mm256_sub_epi32, _mm512_add_ps, _mm512_cvtepi32_ps,
    _mm512_dpbusd_epi32, _mm512_loadu_ps, _mm512_loadu_si512, _mm512_mul_ps, _mm512_mullo_epi32,
    _mm512_set1_epi32, _mm512_set1_ps, _mm512_setzero_si512, _mm512_storeu_ps, _mm512_sub_epi32,
};

/// The fastest of [`Instructions::ALL`] a product may use, by position.
static CEILING: AtomicU8 = AtomicU8::new(0);

/// Output columns per block: one 512-bit register of i32 sums.
const BLOCK: usize = 16;
/// Inputs per 32-bit word of packed bytes.
const QUAD: usize = 4;
/// Inputs per 32-bit word of widened bytes.
#[cfg(target_arch = "x86_64")]
const PAIR: usize = 2;
/// Rows whose outputs a product finishes before it moves on: their outputs
/// (at most 6 KB a row) stay in the core's cache while every block of
/// columns is added in, each block's weights read from the nearer cache for
/// each tile. Walking every row for each block instead read and wrote the
/// outputs from memory, a quarter of the product's time.
#[cfg(target_arch = "x86_64")]
const PANEL_ROWS: usize = 64;
/// AVX2's tile: rows, and groups of 4 columns. 11 of AVX's 16 registers;
/// 6 rows, or a whole block of 4 groups, measured no faster.
#[cfg(target_arch = "x86_64")]
const TILE_ROWS: usize = 4;
#[cfg(target_arch = "x86_64")]
const TILE_GROUPS: usize = 2;

/// The instructions a product runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instructions {
    /// AVX-512 VNNI: 16 columns per instruction.
    Avx512Vnni,
    /// AVX-VNNI: 8 columns per instruction, on CPUs without AVX-512.
    AvxVnni,
    /// AVX2 alone: bytes widened to 16 bits, pairs multiplied and summed.
    Avx2,
    /// Plain integer arithmetic, on any CPU.
    Scalar,
}

impl Instructions {
    /// Fastest first.
    const ALL: [Self; 4] = [Self::Avx512Vnni, Self::AvxVnni, Self::Avx2, Self::Scalar];

    /// Whether this CPU runs them.
    pub fn present(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            match self {
                Self::Avx512Vnni => has!("avx512f") && has!("avx512vnni"),
                Self::AvxVnni => has!("avx2") && has!("avxvnni"),
                Self::Avx2 => has!("avx2"),
                Self::Scalar => true,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Self::Scalar
        }
    }

    /// The fastest this CPU has, at most the ceiling set by
    /// [`Instructions::limit_to`].
    pub fn detect() -> Self {
        let ceiling = usize::from(CEILING.load(Ordering::Relaxed));
        Self::ALL
            .into_iter()
            .skip(ceiling)
            .find(|i| i.present())
            .unwrap_or(Self::Scalar)
    }

    /// Products in this process run on these instructions at most (or
    /// slower ones, where the CPU lacks them): how the embedding bench
    /// measures the path an older CPU takes on a newer one.
    pub fn limit_to(self) {
        let position = Self::ALL.iter().position(|i| *i == self).unwrap_or(0);
        CEILING.store(position as u8, Ordering::Relaxed);
    }

    /// The instructions of a name as [`Instructions::name`] writes it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|i| i.name() == name)
    }

    /// A short name, for the bench's rows and the logs.
    pub fn name(self) -> &'static str {
        match self {
            Self::Avx512Vnni => "avx512-vnni",
            Self::AvxVnni => "avx-vnni",
            Self::Avx2 => "avx2",
            Self::Scalar => "scalar",
        }
    }

    /// Every instruction set this CPU runs, the scalar loop last.
    #[cfg(test)]
    pub fn all_present() -> Vec<Self> {
        Self::ALL.into_iter().filter(|i| i.present()).collect()
    }

    /// Every instruction set this CPU runs but the scalar loop, fastest
    /// first.
    pub fn present_accelerated() -> Vec<Self> {
        Self::ALL
            .into_iter()
            .filter(|i| *i != Self::Scalar && i.present())
            .collect()
    }
}

/// Whether this CPU multiplies int8 in hardware; the scalar loop runs
/// anywhere, but slower than f32.
pub fn accelerated() -> bool {
    Instructions::detect() != Instructions::Scalar
}

/// A dense layer's `[inputs, outputs]` weight, quantised and packed for [`matmul`].
pub struct PackedWeight {
    /// Per input: what it is multiplied by before it is quantised, the
    /// inverse of what its weights were multiplied by.
    input_scales: Vec<f32>,
    /// `[outputs / 16][quads][16]` words of four signed bytes.
    data: Vec<u32>,
    /// Per output column: the value of one step of its bytes.
    scales: Vec<f32>,
    /// Per output column: the sum of its bytes, which each input row's zero
    /// point multiplies.
    column_sums: Vec<i32>,
    inputs: usize,
    outputs: usize,
}

/// Inputs quantised for a product: each row's bytes packed four to a word
/// (and, for AVX2 alone, widened two to a word), the value of one step of
/// each row, and the byte that stands for zero. Kept between products.
#[derive(Default)]
pub struct QuantisedRows {
    words: Vec<u32>,
    pairs: Vec<u32>,
    scales: Vec<f32>,
    zero_points: Vec<i32>,
    /// One row scaled, then as bytes: room reused by every product.
    row: Vec<f32>,
    bytes: Vec<u8>,
}

/// `value / step`, rounded to the nearest byte and clamped to ±127.
fn quantise(value: f32, inverse_step: f32) -> i32 {
    ((value * inverse_step).round() as i32).clamp(-127, 127)
}

/// The step that maps `largest` (a magnitude) to 127, and its inverse; a
/// row or column of zeros gets a step of 0 and bytes of 0.
fn steps(largest: f32) -> (f32, f32) {
    if largest > 0.0 && largest.is_finite() {
        (largest / 127.0, 127.0 / largest)
    } else {
        (0.0, 0.0)
    }
}

impl PackedWeight {
    /// Quantises and packs a row-major `[inputs, outputs]` weight. `None`
    /// when the outputs are not a whole number of blocks.
    ///
    /// `input_ranges`, when given (one per input), is the largest magnitude
    /// each input took on sample texts: input j is then divided by
    /// `s_j = √(range_j / largest weight_j)` before it is quantised and its
    /// weights multiplied by it, which evens out the ranges that the row's
    /// and the column's steps must cover.
    pub fn pack(
        weight: &[f32],
        inputs: usize,
        outputs: usize,
        input_ranges: &[f32],
    ) -> Option<Self> {
        if !outputs.is_multiple_of(BLOCK) || weight.len() != inputs * outputs || inputs == 0 {
            return None;
        }
        let smoothing: Vec<f32> = (0..inputs)
            .map(|j| {
                let row = &weight[j * outputs..(j + 1) * outputs];
                let largest_weight = row.iter().fold(0.0f32, |m, w| m.max(w.abs()));
                let range = input_ranges.get(j).copied().unwrap_or(0.0);
                let s = (range / largest_weight).sqrt();
                if s.is_finite() && s > 0.0 { s } else { 1.0 }
            })
            .collect();
        let smoothed: Vec<f32> = weight
            .chunks_exact(outputs)
            .zip(&smoothing)
            .flat_map(|(row, &s)| row.iter().map(move |w| w * s))
            .collect();
        let weight = &smoothed[..];
        let (scales, inverses): (Vec<f32>, Vec<f32>) = (0..outputs)
            .map(|o| {
                let largest = (0..inputs)
                    .map(|i| weight[i * outputs + o].abs())
                    .fold(0.0f32, f32::max);
                steps(largest)
            })
            .unzip();
        let byte = |input: usize, output: usize| -> i32 {
            if input < inputs {
                quantise(weight[input * outputs + output], inverses[output])
            } else {
                0
            }
        };
        let column_sums = (0..outputs)
            .map(|o| (0..inputs).map(|i| byte(i, o)).sum::<i32>())
            .collect();
        let quads = inputs.div_ceil(QUAD);
        let mut data = Vec::with_capacity(outputs * quads);
        for block in 0..outputs / BLOCK {
            for q in 0..quads {
                for lane in 0..BLOCK {
                    let output = block * BLOCK + lane;
                    let bytes: [u8; QUAD] =
                        std::array::from_fn(|k| byte(q * QUAD + k, output) as i8 as u8);
                    data.push(u32::from_le_bytes(bytes));
                }
            }
        }
        Some(Self {
            input_scales: smoothing.iter().map(|s| 1.0 / s).collect(),
            data,
            scales,
            column_sums,
            inputs,
            outputs,
        })
    }
}

impl QuantisedRows {
    /// Widens each row's bytes to 16 bits, two to a word, for AVX2 alone.
    fn widen(&mut self) {
        self.pairs.clear();
        self.pairs.extend(self.words.iter().flat_map(|word| {
            let b = word.to_le_bytes();
            [
                u32::from(b[0]) | (u32::from(b[1]) << 16),
                u32::from(b[2]) | (u32::from(b[3]) << 16),
            ]
        }));
    }

    /// Quantises each row of `x` (rows of `inputs` values), each input
    /// multiplied by its scale first.
    fn fill(&mut self, x: &[f32], input_scales: &[f32]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
        {
            // SAFETY: the CPU has the features the copy is compiled for.
            #[allow(unsafe_code)]
            return unsafe { self.fill_avx512(x, input_scales) };
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: as above.
            #[allow(unsafe_code)]
            return unsafe { self.fill_avx2(x, input_scales) };
        }
        self.fill_portable(x, input_scales);
    }

    /// [`Self::fill`] compiled for AVX2: its loops 8 values wide.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn fill_avx2(&mut self, x: &[f32], input_scales: &[f32]) {
        self.fill_portable(x, input_scales);
    }

    /// [`Self::fill`] compiled for AVX-512: its loops 16 values wide, where
    /// the baseline target's are 4 (a tenth of the embedding's time).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn fill_avx512(&mut self, x: &[f32], input_scales: &[f32]) {
        self.fill_portable(x, input_scales);
    }

    #[inline(always)]
    fn fill_portable(&mut self, x: &[f32], input_scales: &[f32]) {
        let inputs = input_scales.len();
        let quads = inputs.div_ceil(QUAD);
        let Self {
            words,
            scales,
            zero_points,
            row,
            bytes,
            ..
        } = self;
        words.clear();
        scales.clear();
        zero_points.clear();
        row.resize(inputs, 0.0);
        bytes.resize(quads * QUAD, 0);
        for raw in x.chunks_exact(inputs) {
            for ((v, r), s) in row.iter_mut().zip(raw).zip(input_scales) {
                *v = r * s;
            }
            let (low, high) = range(row);
            let span = high - low;
            let (step, inverse, zero) = if span > 0.0 && span.is_finite() {
                let step = span / 255.0;
                (step, 1.0 / step, (-low / step).round().clamp(0.0, 255.0))
            } else {
                (0.0, 0.0, 0.0)
            };
            scales.push(step);
            zero_points.push(zero as i32);
            to_bytes(row, inverse, zero, &mut bytes[..inputs]);
            bytes[inputs..].fill(zero as u8);
            words.extend(
                bytes
                    .chunks_exact(QUAD)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
        }
    }
}

/// The least and the greatest of `values` and 0, in 16 lanes at once (a
/// fold of `f32::min`, which minds NaN, runs one value at a time).
#[inline(always)]
fn range(values: &[f32]) -> (f32, f32) {
    const LANES: usize = 16;
    let (mut low, mut high) = ([0.0f32; LANES], [0.0f32; LANES]);
    let chunks = values.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for ((l, h), &v) in low.iter_mut().zip(high.iter_mut()).zip(chunk) {
            *l = if v < *l { v } else { *l };
            *h = if v > *h { v } else { *h };
        }
    }
    let fold =
        |(l, h): (f32, f32), &v: &f32| (if v < l { v } else { l }, if v > h { v } else { h });
    let lanes = low
        .iter()
        .zip(&high)
        .fold((0.0, 0.0), |(l, h), (&lo, &hi)| {
            (if lo < l { lo } else { l }, if hi > h { hi } else { h })
        });
    rest.iter().fold(lanes, fold)
}

/// Each value's byte: `value / step + zero`, rounded half up and held to
/// 0 … 255. Written without `f32::round`, which is a call into the maths
/// library per value on the baseline x86-64 target; the sum is never
/// negative where it is truncated, so truncating `+ 0.5` rounds.
#[inline(always)]
#[allow(clippy::manual_clamp)] // `f32::clamp`'s check of its bounds stops the loop vectorising
fn to_bytes(values: &[f32], inverse: f32, zero: f32, bytes: &mut [u8]) {
    let offset = zero + 0.5;
    for (byte, &v) in bytes.iter_mut().zip(values) {
        let t = v * inverse + offset;
        let t = if t < 0.0 {
            0.0
        } else if t > 255.0 {
            255.0
        } else {
            t
        };
        *byte = t as u8;
    }
}
/// `out += x · W` for row-major `x` (`rows × inputs`) and `out` (`rows × outputs`),
/// on the fastest instructions this CPU has. `rows` is room for `x` quantised.
///
/// # Panics
/// When the shapes disagree.
pub fn matmul(out: &mut [f32], x: &[f32], weight: &PackedWeight, rows: &mut QuantisedRows) {
    matmul_on(Instructions::detect(), out, x, weight, rows);
}

/// [`matmul`] on the instructions named.
///
/// # Panics
/// When the shapes disagree, or the CPU lacks the instructions named.
pub fn matmul_on(
    instructions: Instructions,
    out: &mut [f32],
    x: &[f32],
    weight: &PackedWeight,
    quantised: &mut QuantisedRows,
) {
    let (inputs, outputs) = (weight.inputs, weight.outputs);
    assert!(x.len().is_multiple_of(inputs), "input width");
    let rows = x.len() / inputs;
    assert_eq!(out.len(), rows * outputs, "output shape");
    assert!(instructions.present(), "the CPU has no {instructions:?}");
    quantised.fill(x, &weight.input_scales);
    if instructions == Instructions::Avx2 {
        quantised.widen();
    }
    let product = Product {
        x: &quantised.words,
        x_pairs: &quantised.pairs,
        row_scales: &quantised.scales,
        zero_points: &quantised.zero_points,
        weight,
        quads: inputs.div_ceil(QUAD),
    };
    match instructions {
        Instructions::Scalar => product.scalar(out),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX-512 F and VNNI (asserted above); the
        // lengths the tiles rely on are the ones checked above and built here.
        #[allow(unsafe_code)]
        Instructions::Avx512Vnni => unsafe { product.avx512(out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above, for AVX2 and AVX-VNNI.
        #[allow(unsafe_code)]
        Instructions::AvxVnni => unsafe { product.avx(out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above, for AVX2.
        #[allow(unsafe_code)]
        Instructions::Avx2 => unsafe { product.avx2(out) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => unreachable!("only the scalar loop is present off x86-64"),
    }
}

/// One product's operands: `x` holds `rows × quads` words, the weight
/// `outputs × quads`.
struct Product<'a> {
    x: &'a [u32],
    /// `x` widened, `rows × 2 quads` words, for AVX2 alone.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    x_pairs: &'a [u32],
    row_scales: &'a [f32],
    zero_points: &'a [i32],
    weight: &'a PackedWeight,
    quads: usize,
}

impl Product<'_> {
    /// The reference: the same integer sums, then the same two float steps
    /// (the scales' product, then `out + sum × scale`) as the vector paths.
    fn scalar(&self, out: &mut [f32]) {
        let outputs = self.weight.outputs;
        for (r, row_out) in out.chunks_exact_mut(outputs).enumerate() {
            let x = &self.x[r * self.quads..(r + 1) * self.quads];
            for (o, value) in row_out.iter_mut().enumerate() {
                let (block, lane) = (o / BLOCK, o % BLOCK);
                let column = &self.weight.data[block * self.quads * BLOCK..];
                let sum: i32 = x
                    .iter()
                    .enumerate()
                    .map(|(q, &input)| {
                        let w = column[q * BLOCK + lane].to_le_bytes();
                        let input = input.to_le_bytes();
                        (0..QUAD)
                            .map(|k| i32::from(input[k]) * i32::from(w[k] as i8))
                            .sum::<i32>()
                    })
                    .sum();
                let scale = self.weight.scales[o] * self.row_scales[r];
                let offset = self.zero_points[r] * self.weight.column_sums[o];
                *value += (sum - offset) as f32 * scale;
            }
        }
    }

    /// Tiles of up to 4 rows × 4 blocks, their sums in registers over the
    /// whole input length.
    ///
    /// Safety: AVX-512 F and VNNI present; lengths as [`Product`] says.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vnni")]
    #[allow(unsafe_code)]
    unsafe fn avx512(&self, out: &mut [f32]) {
        let rows = self.row_scales.len();
        let blocks = self.weight.outputs / BLOCK;
        for panel in (0..rows).step_by(PANEL_ROWS) {
            let panel_end = (panel + PANEL_ROWS).min(rows);
            let mut block = 0;
            while block < blocks {
                let wide = if blocks - block >= 4 { 4 } else { 1 };
                let mut row = panel;
                while row < panel_end {
                    let high = (panel_end - row).min(4);
                    // SAFETY: as this function's; the tile stays inside the
                    // slices at its corner.
                    unsafe {
                        match (high, wide) {
                            (4, 4) => self.tile512::<4, 4>(out, row, block),
                            (3, 4) => self.tile512::<3, 4>(out, row, block),
                            (2, 4) => self.tile512::<2, 4>(out, row, block),
                            (1, 4) => self.tile512::<1, 4>(out, row, block),
                            (4, _) => self.tile512::<4, 1>(out, row, block),
                            (3, _) => self.tile512::<3, 1>(out, row, block),
                            (2, _) => self.tile512::<2, 1>(out, row, block),
                            _ => self.tile512::<1, 1>(out, row, block),
                        }
                    }
                    row += high;
                }
                block += wide;
            }
        }
    }

    /// `R` rows from `row` × `C` blocks from `block`.
    ///
    /// Safety: as [`Product::avx512`]; the tile lies inside the product.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vnni")]
    #[inline]
    #[allow(unsafe_code)]
    unsafe fn tile512<const R: usize, const C: usize>(
        &self,
        out: &mut [f32],
        row: usize,
        block: usize,
    ) {
        let (quads, outputs) = (self.quads, self.weight.outputs);
        debug_assert!(row + R <= self.row_scales.len() && (block + C) * BLOCK <= outputs);
        let x = self.x[row * quads..].as_ptr();
        let w = self.weight.data[block * quads * BLOCK..].as_ptr();
        let mut sums = [[_mm512_setzero_si512(); C]; R];
        // Indexed loops over the constant bounds: they unroll, and the sums
        // stay in registers (iterator adapters here left them on the stack).
        #[allow(clippy::needless_range_loop)]
        for q in 0..quads {
            // SAFETY: q < quads, c < C and r < R stay inside the tile.
            unsafe {
                let mut columns = [_mm512_setzero_si512(); C];
                for c in 0..C {
                    columns[c] = _mm512_loadu_si512(w.add((c * quads + q) * BLOCK).cast());
                }
                for r in 0..R {
                    let input = _mm512_set1_epi32(*x.add(r * quads + q) as i32);
                    for c in 0..C {
                        sums[r][c] = _mm512_dpbusd_epi32(sums[r][c], input, columns[c]);
                    }
                }
            }
        }
        for (r, sums) in sums.iter().enumerate() {
            let row_scale = _mm512_set1_ps(self.row_scales[row + r]);
            let zero_point = _mm512_set1_epi32(self.zero_points[row + r]);
            for (c, sum) in sums.iter().enumerate() {
                let column = (block + c) * BLOCK;
                // SAFETY: inside `out` and the per-column tables, by the
                // tile's bounds above.
                unsafe {
                    let sums =
                        _mm512_loadu_si512(self.weight.column_sums[column..].as_ptr().cast());
                    let offsets = _mm512_mullo_epi32(sums, zero_point);
                    let scales = _mm512_loadu_ps(self.weight.scales[column..].as_ptr());
                    let scale = _mm512_mul_ps(scales, row_scale);
                    let sum = _mm512_cvtepi32_ps(_mm512_sub_epi32(*sum, offsets));
                    let at = out[(row + r) * outputs + column..].as_mut_ptr();
                    _mm512_storeu_ps(
                        at,
                        _mm512_add_ps(_mm512_loadu_ps(at), _mm512_mul_ps(sum, scale)),
                    );
                }
            }
        }
    }

    /// Tiles of up to 4 rows × 1 block (two 256-bit halves): 8 sums, 2
    /// columns and an input in the 16 registers AVX has.
    ///
    /// Safety: AVX2 and AVX-VNNI present; lengths as [`Product`] says.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,avxvnni")]
    #[allow(unsafe_code)]
    unsafe fn avx(&self, out: &mut [f32]) {
        let rows = self.row_scales.len();
        for block in 0..self.weight.outputs / BLOCK {
            let mut row = 0;
            while row < rows {
                let high = (rows - row).min(4);
                // SAFETY: as this function's.
                unsafe {
                    match high {
                        4 => self.tile256::<4>(out, row, block),
                        3 => self.tile256::<3>(out, row, block),
                        2 => self.tile256::<2>(out, row, block),
                        _ => self.tile256::<1>(out, row, block),
                    }
                }
                row += high;
            }
        }
    }

    /// `R` rows from `row` × the block `block`.
    ///
    /// Safety: as [`Product::avx`]; the tile lies inside the product.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,avxvnni")]
    #[inline]
    #[allow(unsafe_code)]
    unsafe fn tile256<const R: usize>(&self, out: &mut [f32], row: usize, block: usize) {
        const HALF: usize = BLOCK / 2;
        let (quads, outputs) = (self.quads, self.weight.outputs);
        debug_assert!(row + R <= self.row_scales.len() && (block + 1) * BLOCK <= outputs);
        let x = self.x[row * quads..].as_ptr();
        let w = self.weight.data[block * quads * BLOCK..].as_ptr();
        let mut sums = [[_mm256_setzero_si256(); 2]; R];
        for q in 0..quads {
            // SAFETY: q < quads and r < R stay inside the tile.
            unsafe {
                let columns: [__m256i; 2] =
                    std::array::from_fn(|h| _mm256_loadu_si256(w.add(q * BLOCK + h * HALF).cast()));
                for (r, sums) in sums.iter_mut().enumerate() {
                    let input = _mm256_set1_epi32(*x.add(r * quads + q) as i32);
                    for (sum, column) in sums.iter_mut().zip(&columns) {
                        *sum = _mm256_dpbusd_avx_epi32(*sum, input, *column);
                    }
                }
            }
        }
        for (r, sums) in sums.iter().enumerate() {
            for (h, sum) in sums.iter().enumerate() {
                // SAFETY: the tile's row and columns lie inside the product.
                unsafe { self.add_scaled8(out, *sum, row + r, block * BLOCK + h * HALF) };
            }
        }
    }

    /// Adds one row's sums of 8 columns from `column` into `out`, as the
    /// scalar loop does: `(sum − zero point × column sum) × (column scale ×
    /// row scale)`, then added.
    ///
    /// Safety: AVX2 present; `row` and the 8 columns lie inside the product.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    #[allow(unsafe_code)]
    unsafe fn add_scaled8(&self, out: &mut [f32], sum: __m256i, row: usize, column: usize) {
        let outputs = self.weight.outputs;
        let row_scale = _mm256_set1_ps(self.row_scales[row]);
        let zero_point = _mm256_set1_epi32(self.zero_points[row]);
        // SAFETY: inside `out` and the per-column tables, as the caller
        // promises.
        unsafe {
            let sums = _mm256_loadu_si256(self.weight.column_sums[column..].as_ptr().cast());
            let offsets = _mm256_mullo_epi32(sums, zero_point);
            let scales = _mm256_loadu_ps(self.weight.scales[column..].as_ptr());
            let scale = _mm256_mul_ps(scales, row_scale);
            let sum = _mm256_cvtepi32_ps(_mm256_sub_epi32(sum, offsets));
            let at = out[row * outputs + column..].as_mut_ptr();
            _mm256_storeu_ps(
                at,
                _mm256_add_ps(_mm256_loadu_ps(at), _mm256_mul_ps(sum, scale)),
            );
        }
    }

    /// Tiles of up to `TILE_ROWS` rows × `TILE_GROUPS` groups of 4 columns,
    /// in panels of [`PANEL_ROWS`] rows as on AVX-512.
    ///
    /// Safety: AVX2 present; lengths as [`Product`] says; the rows widened.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[allow(unsafe_code)]
    unsafe fn avx2(&self, out: &mut [f32]) {
        const G: usize = TILE_GROUPS;
        let rows = self.row_scales.len();
        let groups = self.weight.outputs / 4;
        for panel in (0..rows).step_by(PANEL_ROWS) {
            let panel_end = (panel + PANEL_ROWS).min(rows);
            for group in (0..groups).step_by(G) {
                let mut row = panel;
                while row < panel_end {
                    let high = (panel_end - row).min(TILE_ROWS);
                    // SAFETY: as this function's.
                    unsafe {
                        match high {
                            4 => self.tile_widened::<4, G>(out, row, group),
                            3 => self.tile_widened::<3, G>(out, row, group),
                            2 => self.tile_widened::<2, G>(out, row, group),
                            _ => self.tile_widened::<1, G>(out, row, group),
                        }
                    }
                    row += high;
                }
            }
        }
    }

    /// `R` rows from `row` × `G` groups of 4 columns from group `group`.
    /// Each quad's 4 columns × 4 bytes are widened into one register of 16
    /// numbers; the row's 4 inputs, widened and repeated, multiply them, and
    /// `vpmaddwd` adds each column's pairs, which leaves two partial sums per
    /// column side by side until the tile ends.
    ///
    /// Safety: as [`Product::avx2`]; the tile lies inside the product.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    #[allow(unsafe_code)]
    unsafe fn tile_widened<const R: usize, const G: usize>(
        &self,
        out: &mut [f32],
        row: usize,
        group: usize,
    ) {
        const QUAD_BYTES: usize = BLOCK * QUAD;
        const GROUP_BYTES: usize = 4 * QUAD;
        let quads = self.quads;
        let pairs = quads * (QUAD / PAIR);
        let (block, within) = (group * 4 / BLOCK, group * 4 % BLOCK);
        debug_assert!(row + R <= self.row_scales.len());
        debug_assert!(within + G * 4 <= BLOCK && G.is_multiple_of(2));
        debug_assert!(self.x_pairs.len() >= (row + R) * pairs);
        let x = self.x_pairs[row * pairs..].as_ptr();
        let w = self.weight.data[block * quads * BLOCK + within..]
            .as_ptr()
            .cast::<u8>();
        let mut sums = [[_mm256_setzero_si256(); G]; R];
        #[allow(clippy::needless_range_loop)]
        for q in 0..quads {
            // SAFETY: q < quads, g < G and r < R stay inside the tile; a
            // row's widened inputs of quad q are its words 2q and 2q + 1.
            unsafe {
                let at = w.add(q * QUAD_BYTES);
                let mut columns = [_mm256_setzero_si256(); G];
                for g in 0..G {
                    columns[g] =
                        _mm256_cvtepi8_epi16(_mm_loadu_si128(at.add(g * GROUP_BYTES).cast()));
                }
                for r in 0..R {
                    let inputs = x.add(r * pairs + q * (QUAD / PAIR)).cast::<i64>();
                    let input = _mm256_set1_epi64x(inputs.read_unaligned());
                    for g in 0..G {
                        sums[r][g] =
                            _mm256_add_epi32(sums[r][g], _mm256_madd_epi16(input, columns[g]));
                    }
                }
            }
        }
        for (r, sums) in sums.iter().enumerate() {
            for (g, pair) in sums.chunks_exact(2).enumerate() {
                // [c0 c0 c1 c1 | c2 c2 c3 c3] and [c4 c4 c5 c5 | c6 c6 c7 c7]
                // give [c0 c1 c4 c5 | c2 c3 c6 c7], put in column order.
                let added = _mm256_hadd_epi32(pair[0], pair[1]);
                let ordered = _mm256_permute4x64_epi64::<0b11_01_10_00>(added);
                let column = (group + 2 * g) * 4;
                // SAFETY: the tile's row and columns lie inside the product.
                unsafe { self.add_scaled8(out, ordered, row + r, column) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: usize, spread: f32) -> Vec<f32> {
        (0..n)
            .map(|i| ((i * seed % 101) as f32 - 50.0) / 50.0 * spread)
            .collect()
    }

    /// Every instruction set present gives the scalar loop's floats exactly,
    /// from the same packed weights, over every tile shape (1 to 4 rows
    /// high; 1, 2 and 4 blocks wide; half blocks on AVX2), more rows than a
    /// panel, an input width not a multiple of four or of two, and a row of
    /// zeros.
    #[test]
    fn every_instruction_set_gives_the_scalar_loops_floats() {
        for (rows, inputs, outputs) in [
            (1, 7, 16),
            (6, 33, 112),
            (9, 384, 64),
            (5, 2, 80),
            (3, 40, 48),
            (7, 17, 32),
            (70, 40, 32),
        ] {
            let mut x = values(rows * inputs, 37, 3.0);
            x[..inputs].fill(0.0);
            let w = values(inputs * outputs, 53, 0.2);
            let packed = PackedWeight::pack(&w, inputs, outputs, &[]).unwrap();
            let run = |instructions| {
                let mut out = values(rows * outputs, 11, 1.0);
                matmul_on(
                    instructions,
                    &mut out,
                    &x,
                    &packed,
                    &mut QuantisedRows::default(),
                );
                out
            };
            let reference = run(Instructions::Scalar);
            for instructions in Instructions::all_present() {
                assert_eq!(
                    run(instructions),
                    reference,
                    "{instructions:?} on {rows}×{inputs}·{outputs}"
                );
            }
        }
    }

    /// Against the f32 product: each sum within the rounding of 8-bit
    /// steps, which is far below the values' spread.
    #[test]
    fn stays_within_the_quantisation_step_of_the_f32_product() {
        let (rows, inputs, outputs) = (5, 384, 32);
        let x = values(rows * inputs, 37, 2.0);
        let w = values(inputs * outputs, 53, 0.1);
        let packed = PackedWeight::pack(&w, inputs, outputs, &[]).unwrap();
        let mut out = vec![0.0f32; rows * outputs];
        matmul(&mut out, &x, &packed, &mut QuantisedRows::default());
        for r in 0..rows {
            for o in 0..outputs {
                let exact: f32 = (0..inputs)
                    .map(|i| x[r * inputs + i] * w[i * outputs + o])
                    .sum();
                // Each product errs by at most half a step of each factor.
                let bound = inputs as f32 * (2.0 / 127.0 * 0.1 + 0.1 / 127.0 * 2.0) / 2.0;
                let got = out[r * outputs + o];
                assert!(
                    (got - exact).abs() <= bound,
                    "({r}, {o}) {got} vs {exact}, bound {bound}"
                );
            }
        }
        assert!(out.iter().any(|&v| v.abs() > 1.0), "a product of substance");
    }

    #[test]
    fn a_width_not_of_whole_blocks_is_not_packed() {
        assert!(PackedWeight::pack(&[0.0; 10], 1, 10, &[]).is_none());
        assert!(PackedWeight::pack(&[1.0; 16], 1, 16, &[]).is_some());
    }
}
