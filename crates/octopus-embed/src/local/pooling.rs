//! Pooling token vectors into one sentence vector, as sentence-transformers does.

/// How token vectors become one sentence vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pooling {
    /// The mean of the tokens.
    Mean,
    /// The first token's vector (`[CLS]`).
    Cls,
    /// The element-wise maximum over the tokens.
    Max,
    /// The sum of the tokens divided by the square root of their count.
    MeanSqrtLen,
}

impl Pooling {
    /// `tokens`: one sequence's token vectors, `hidden` values each, row after
    /// row (no padding). Returns the sentence vector.
    pub fn apply(self, tokens: &[f32], hidden: usize) -> Vec<f32> {
        let mut rows = tokens.chunks_exact(hidden);
        let count = rows.len();
        match self {
            Pooling::Cls => rows
                .next()
                .map_or_else(|| vec![0.0; hidden], <[f32]>::to_vec),
            Pooling::Max => rows.fold(vec![f32::NEG_INFINITY; hidden], |mut top, row| {
                for (t, v) in top.iter_mut().zip(row) {
                    *t = t.max(*v);
                }
                top
            }),
            Pooling::Mean | Pooling::MeanSqrtLen => {
                let mut total = rows.fold(vec![0.0; hidden], |mut total, row| {
                    for (t, v) in total.iter_mut().zip(row) {
                        *t += v;
                    }
                    total
                });
                // sentence-transformers clamps the count at 1e-9 against empty inputs.
                let count = (count as f32).max(1e-9);
                let divisor = if self == Pooling::Mean {
                    count
                } else {
                    count.sqrt()
                };
                total.iter_mut().for_each(|t| *t /= divisor);
                total
            }
        }
    }
}

/// Scales a vector to unit length (L2), as `torch.nn.functional.normalize`.
pub fn l2_normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    vector.iter_mut().for_each(|v| *v /= norm);
}

#[cfg(test)]
mod tests {
    use super::*;

    // One sentence of 2 tokens; hidden size 2.
    const TOKENS: [f32; 4] = [1., 2., 3., 6.];

    #[test]
    fn each_pooling_mode() {
        assert_eq!(Pooling::Mean.apply(&TOKENS, 2), vec![2., 4.]);
        assert_eq!(Pooling::Max.apply(&TOKENS, 2), vec![3., 6.]);
        assert_eq!(Pooling::Cls.apply(&TOKENS, 2), vec![1., 2.]);
        let sqrt = Pooling::MeanSqrtLen.apply(&TOKENS, 2);
        assert!((sqrt[0] - 4. / 2f32.sqrt()).abs() < 1e-6);
    }

    #[test]
    fn normalised_vectors_have_unit_length() {
        let mut v = vec![3f32, 4.];
        l2_normalize(&mut v);
        assert_eq!(v, vec![0.6, 0.8]);
    }
}
