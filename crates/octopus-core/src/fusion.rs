//! Combining ranked lists from different retrievers.

use std::collections::HashMap;
use std::hash::Hash;

/// The constant of reciprocal rank fusion (Cormack et al., 2009): it damps the
/// weight of the very first ranks, so that agreement between lists counts more
/// than one list's favourite.
pub const RRF_K: f32 = 60.0;

/// Reciprocal rank fusion: each item scores the sum, over the lists it appears
/// in, of `1 / (RRF_K + rank)` (ranks from 1). Best first; ties keep the order
/// of first appearance.
pub fn reciprocal_rank_fusion<T: Eq + Hash + Clone>(lists: &[Vec<T>]) -> Vec<(T, f32)> {
    let mut scores: HashMap<T, (f32, usize)> = HashMap::new();
    let mut order = 0;
    for list in lists {
        for (rank, item) in list.iter().enumerate() {
            let entry = scores.entry(item.clone()).or_insert_with(|| {
                order += 1;
                (0.0, order)
            });
            entry.0 += 1.0 / (RRF_K + rank as f32 + 1.0);
        }
    }
    let mut fused: Vec<(T, f32, usize)> = scores
        .into_iter()
        .map(|(item, (score, first))| (item, score, first))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    fused
        .into_iter()
        .map(|(item, score, _)| (item, score))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_beats_a_single_top_rank() {
        // "b" is second in both lists; "a" first in one only.
        let fused = reciprocal_rank_fusion(&[vec!["a", "b", "c"], vec!["d", "b", "e"]]);
        assert_eq!(fused[0].0, "b");
        assert!((fused[0].1 - 2.0 / 62.0).abs() < 1e-6);
        assert_eq!(fused.len(), 5);
        assert_eq!(fused[1].0, "a", "ties keep the order of first appearance");
    }

    #[test]
    fn one_list_keeps_its_order() {
        let fused = reciprocal_rank_fusion(&[vec![3, 1, 2]]);
        assert_eq!(
            fused.iter().map(|(item, _)| *item).collect::<Vec<_>>(),
            vec![3, 1, 2]
        );
    }
}
