//! [`AttentionMask`]: which keys each query may see, kept on the host as per-key flags and
//! per-query ranges instead of a `[batch, seq, total]` bias.

/// Which keys each query of a batch may attend to.
///
/// Query `q` of sequence `b` sees key `k` when `k` lies in the query's range
/// ([`range`](Self::range): causal limits, a packed example's own tokens) and the key is a real
/// token ([`keys`](Self::keys): false for padding). This is what the masks of this crate need
/// (left padding, a KV-cache offset, block-diagonal packing) in `O(batch * (seq + total))`
/// memory; attention kernels read it directly, and [`bias`](Self::bias) expands it into the
/// additive form for the tensor-op path.
///
/// A query that sees no key at all (a padding position of a left-padded prompt) attends
/// uniformly to every key, which is what softmax gives over a row of equal large negative
/// biases; no loss reads such a position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttentionMask {
    batch: usize,
    seq: usize,
    total: usize,
    /// `[batch * total]`: the key is a real token.
    keys: Vec<bool>,
    /// `[batch * seq]`: the half-open range of keys the query may see.
    ranges: Vec<(usize, usize)>,
}

impl AttentionMask {
    /// Causal attention for `seq` new tokens after `past` cached ones: query `q` sees the real
    /// keys at positions up to `past + q`. `mask[b]` covers all `past + seq` positions (true =
    /// real token).
    ///
    /// # Panics
    /// When the rows of `mask` differ in length or are shorter than `past`.
    pub fn causal(mask: &[Vec<bool>], past: usize) -> Self {
        let batch = mask.len();
        let total = mask.first().map_or(0, Vec::len);
        assert!(
            mask.iter().all(|row| row.len() == total) && total >= past,
            "attention mask rows must all cover past + seq = {total} positions (past {past})"
        );
        let seq = total - past;
        let ranges = (0..batch)
            .flat_map(|_| (0..seq).map(|query| (0, past + query + 1)))
            .collect();
        Self {
            batch,
            seq,
            total,
            keys: mask.concat(),
            ranges,
        }
    }

    /// A mask from its parts: `keys` (`[batch * total]`, row-major) and one key range per query
    /// (`[batch * seq]`, row-major; ends beyond `total` are cut to it).
    ///
    /// # Panics
    /// When the lengths do not match `batch`, `seq` and `total`.
    pub fn from_parts(
        [batch, seq, total]: [usize; 3],
        keys: Vec<bool>,
        ranges: Vec<std::ops::Range<usize>>,
    ) -> Self {
        assert_eq!(keys.len(), batch * total, "attention mask: key flags");
        assert_eq!(ranges.len(), batch * seq, "attention mask: query ranges");
        let ranges = ranges
            .into_iter()
            .map(|range| (range.start.min(total), range.end.min(total)))
            .collect();
        Self {
            batch,
            seq,
            total,
            keys,
            ranges,
        }
    }

    /// `[batch, seq, total]`: sequences, queries, keys.
    pub fn dims(&self) -> [usize; 3] {
        [self.batch, self.seq, self.total]
    }

    /// Sequence `b`'s key flags (true = a real token), `total` of them.
    pub fn keys(&self, b: usize) -> &[bool] {
        &self.keys[b * self.total..(b + 1) * self.total]
    }

    /// The half-open range of keys query `q` of sequence `b` may see (before the key flags).
    pub fn range(&self, b: usize, q: usize) -> (usize, usize) {
        self.ranges[b * self.seq + q]
    }

    /// Whether query `q` of sequence `b` sees key `k`.
    pub fn visible(&self, b: usize, q: usize, k: usize) -> bool {
        let (start, end) = self.range(b, q);
        start <= k && k < end && self.keys(b)[k]
    }

    /// The additive form, `[batch, seq, total]` row-major: 0 where a query sees a key,
    /// `f32::MIN` elsewhere.
    pub fn bias(&self) -> Vec<f32> {
        let mut bias = Vec::with_capacity(self.batch * self.seq * self.total);
        for b in 0..self.batch {
            for q in 0..self.seq {
                bias.extend(
                    (0..self.total).map(|k| if self.visible(b, q, k) { 0.0 } else { f32::MIN }),
                );
            }
        }
        bias
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causal_mask_with_padding_and_a_cache_offset() {
        // Two cached positions (the first is padding), two new ones.
        let mask = AttentionMask::causal(&[vec![false, true, true, true]], 2);
        assert_eq!(mask.dims(), [1, 2, 4]);
        let visible: Vec<Vec<bool>> = (0..2)
            .map(|q| (0..4).map(|k| mask.visible(0, q, k)).collect())
            .collect();
        assert_eq!(
            visible,
            [
                vec![false, true, true, false],
                vec![false, true, true, true]
            ]
        );
        assert_eq!(
            mask.bias(),
            [f32::MIN, 0.0, 0.0, f32::MIN, f32::MIN, 0.0, 0.0, 0.0]
        );
    }

    #[test]
    fn ranges_are_cut_to_the_keys() {
        let mask = AttentionMask::from_parts([1, 2, 2], vec![true, true], vec![0..1, 1..9]);
        assert_eq!(mask.range(0, 1), (1, 2));
        assert!(mask.visible(0, 1, 1) && !mask.visible(0, 1, 0) && !mask.visible(0, 0, 1));
    }
}
