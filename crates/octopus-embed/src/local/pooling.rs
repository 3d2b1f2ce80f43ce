//! Pooling token vectors into one sentence vector, as sentence-transformers does.

use candle_core::{D, DType, Tensor};

/// How token vectors become one sentence vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pooling {
    /// The mean of the real (unpadded) tokens.
    Mean,
    /// The first token's vector (`[CLS]`).
    Cls,
    /// The element-wise maximum over real tokens.
    Max,
    /// The sum of real tokens divided by the square root of their count.
    MeanSqrtLen,
}

impl Pooling {
    /// `tokens`: [batch, seq, hidden]; `mask`: [batch, seq] of 0/1. Returns [batch, hidden].
    pub fn apply(self, tokens: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(D::Minus1)?; // [batch, seq, 1]
        match self {
            Pooling::Cls => tokens.narrow(1, 0, 1)?.squeeze(1),
            Pooling::Mean | Pooling::MeanSqrtLen => {
                let summed = tokens.broadcast_mul(&mask)?.sum(1)?;
                // sentence-transformers clamps the count at 1e-9 against empty inputs.
                let count = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
                let divisor = if self == Pooling::Mean {
                    count
                } else {
                    count.sqrt()?
                };
                summed.broadcast_div(&divisor)
            }
            Pooling::Max => {
                // Padded positions must never win: push them far below any value.
                let penalty = ((mask.ones_like()? - &mask)? * -1e9)?;
                tokens.broadcast_add(&penalty)?.max(1)
            }
        }
    }
}

/// Scales each row to unit length (L2), as `torch.nn.functional.normalize`.
pub fn l2_normalize(rows: &Tensor) -> candle_core::Result<Tensor> {
    let norms = rows.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
    rows.broadcast_div(&norms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    fn tokens() -> (Tensor, Tensor) {
        // One sentence of 3 positions, the last padded; hidden size 2.
        let tokens = Tensor::new(&[[[1f32, 2.], [3., 6.], [100., 100.]]], &Device::Cpu).unwrap();
        let mask = Tensor::new(&[[1u32, 1, 0]], &Device::Cpu).unwrap();
        (tokens, mask)
    }

    fn rows(t: Tensor) -> Vec<Vec<f32>> {
        t.to_vec2().unwrap()
    }

    #[test]
    fn padding_never_counts() {
        let (t, m) = tokens();
        assert_eq!(
            rows(Pooling::Mean.apply(&t, &m).unwrap()),
            vec![vec![2., 4.]]
        );
        assert_eq!(
            rows(Pooling::Max.apply(&t, &m).unwrap()),
            vec![vec![3., 6.]]
        );
        assert_eq!(
            rows(Pooling::Cls.apply(&t, &m).unwrap()),
            vec![vec![1., 2.]]
        );
        let sqrt = rows(Pooling::MeanSqrtLen.apply(&t, &m).unwrap());
        assert!((sqrt[0][0] - 4. / 2f32.sqrt()).abs() < 1e-6);
    }

    #[test]
    fn normalised_rows_have_unit_length() {
        let v = l2_normalize(&Tensor::new(&[[3f32, 4.]], &Device::Cpu).unwrap()).unwrap();
        assert_eq!(rows(v), vec![vec![0.6, 0.8]]);
    }
}
