//! bfloat16 storage for vectors: the top half of an f32, so widening is a
//! shift and the exponent range is f32's.

/// `x` rounded to the nearest bfloat16, ties to even.
#[inline]
pub fn round(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        // Keep it a NaN: rounding could carry its payload into infinity.
        return ((bits >> 16) | 0x0040) as u16;
    }
    let round_bit = 0x7FFF + ((bits >> 16) & 1);
    (bits.wrapping_add(round_bit) >> 16) as u16
}

#[inline]
fn widen_one(x: u16) -> f32 {
    f32::from_bits(u32::from(x) << 16)
}

pub fn round_into(from: &[f32], into: &mut [u16]) {
    for (to, &x) in into.iter_mut().zip(from) {
        *to = round(x);
    }
}

pub fn widen(from: &[u16]) -> Vec<f32> {
    from.iter().map(|&x| widen_one(x)).collect()
}

/// The dot product of `a` with the widened `b`, summed exactly as
/// [`crate::dot`] sums, so both give the same result for the same values.
#[inline]
pub fn dot(a: &[f32], b: &[u16]) -> f32 {
    let mut sums = [0.0f32; 8];
    let chunks = a.len() / 8 * 8;
    for (x, y) in a[..chunks].chunks_exact(8).zip(b[..chunks].chunks_exact(8)) {
        for lane in 0..8 {
            sums[lane] += x[lane] * widen_one(y[lane]);
        }
    }
    let tail: f32 = a[chunks..]
        .iter()
        .zip(&b[chunks..])
        .map(|(x, &y)| x * widen_one(y))
        .sum();
    sums.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_to_nearest_with_ties_to_even() {
        assert_eq!(widen_one(round(1.0)), 1.0);
        assert_eq!(widen_one(round(-0.5)), -0.5);
        // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: to the even one, 1.
        assert_eq!(widen_one(round(1.0 + 1.0 / 256.0)), 1.0);
        // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: to 1 + 2^-6.
        assert_eq!(widen_one(round(1.0 + 3.0 / 256.0)), 1.0 + 1.0 / 64.0);
        assert_eq!(widen_one(round(1.0 + 1.5 / 256.0)), 1.0 + 1.0 / 128.0);
        assert!(widen_one(round(f32::NAN)).is_nan());
        assert_eq!(widen_one(round(f32::INFINITY)), f32::INFINITY);
    }

    #[test]
    fn error_stays_within_half_a_unit_in_the_last_place() {
        for i in 0..10_000 {
            let x = (i as f32 * 0.7301).sin() * 3.0;
            let back = widen_one(round(x));
            assert!((back - x).abs() <= x.abs() / 256.0, "{x} → {back}");
        }
    }

    #[test]
    fn dot_equals_the_f32_dot_of_the_widened_vector() {
        let a: Vec<f32> = (0..13).map(|i| (i as f32 * 0.37).cos()).collect();
        let b: Vec<f32> = (0..13).map(|i| (i as f32 * 0.91).sin()).collect();
        let mut rounded = vec![0; 13];
        round_into(&b, &mut rounded);
        assert_eq!(dot(&a, &rounded), crate::dot(&a, &widen(&rounded)));
    }
}
