//! [`SftSequence`]: what one row of a training batch holds — one example, or several packed.
//!
//! Packing follows TRL's default `"bfd"` strategy (best-fit decreasing, examples longer than
//! `max_length` truncated first) together with its position-id handling: every example in a packed
//! sequence keeps its own positions (0, 1, …) and attends only to its own tokens (block-diagonal
//! causal attention, see [`crate::sft::SftBatch`]), and no loss crosses from one example into the
//! next. Packed training therefore computes the same per-token losses as unpacked training; it
//! only removes padding.

use crate::sft::masking::TokenizedExample;

/// Token ids of one training sequence, its loss mask, and the examples it is made of.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SftSequence {
    /// Token ids of all examples, concatenated.
    pub input_ids: Vec<u32>,
    /// `loss_mask[t]`: the loss includes predicting token `t`.
    pub loss_mask: Vec<bool>,
    /// Lengths of the examples in order; they sum to `input_ids.len()`.
    pub segment_lengths: Vec<usize>,
}

impl SftSequence {
    /// A sequence holding one example.
    pub fn single(example: TokenizedExample) -> Self {
        let length = example.input_ids.len();
        Self {
            input_ids: example.input_ids,
            loss_mask: example.loss_mask,
            segment_lengths: vec![length],
        }
    }

    /// Appends an example as a new segment.
    pub fn push(&mut self, example: &TokenizedExample) {
        self.input_ids.extend_from_slice(&example.input_ids);
        self.loss_mask.extend_from_slice(&example.loss_mask);
        self.segment_lengths.push(example.input_ids.len());
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.input_ids.len()
    }

    /// Whether there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.input_ids.is_empty()
    }

    /// `targets[t]`: whether position `t` predicts token `t + 1` inside the loss — the next token
    /// is masked in and belongs to the same segment. Length `len() - 1` (0 when empty).
    pub fn loss_targets(&self) -> Vec<bool> {
        let mut targets = vec![false; self.len().saturating_sub(1)];
        let mut start = 0;
        for &length in &self.segment_lengths {
            if length > 1 {
                targets[start..start + length - 1]
                    .copy_from_slice(&self.loss_mask[start + 1..start + length]);
            }
            start += length;
        }
        targets
    }

    /// Number of tokens that carry loss.
    pub fn num_loss_tokens(&self) -> usize {
        self.loss_targets().iter().filter(|&&t| t).count()
    }
}

/// One sequence per example (no packing).
pub fn unpacked(examples: Vec<TokenizedExample>) -> Vec<SftSequence> {
    examples.into_iter().map(SftSequence::single).collect()
}

/// Packs examples (each at most `max_length` tokens; truncate first) into sequences of at most
/// `max_length` tokens by best-fit decreasing: longest first, each into the fullest sequence it
/// still fits in. Empty examples are dropped. Deterministic.
pub fn pack_examples(examples: &[TokenizedExample], max_length: usize) -> Vec<SftSequence> {
    let mut order: Vec<usize> = (0..examples.len())
        .filter(|&i| !examples[i].is_empty())
        .collect();
    order.sort_by_key(|&i| std::cmp::Reverse(examples[i].len()));
    let mut bins: Vec<SftSequence> = Vec::new();
    for index in order {
        let example = &examples[index];
        let best = bins
            .iter()
            .enumerate()
            .filter(|(_, bin)| bin.len() + example.len() <= max_length)
            .max_by_key(|(position, bin)| (bin.len(), std::cmp::Reverse(*position)))
            .map(|(position, _)| position);
        match best {
            Some(position) => bins[position].push(example),
            None => bins.push(SftSequence::single(example.clone())),
        }
    }
    bins
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(length: usize, first_id: u32) -> TokenizedExample {
        TokenizedExample {
            input_ids: (first_id..first_id + length as u32).collect(),
            loss_mask: vec![true; length],
        }
    }

    #[test]
    fn best_fit_decreasing_fills_bins_without_splitting_examples() {
        let examples = [5, 3, 6, 2, 4].map(|l| example(l, 100 * l as u32));
        let packed = pack_examples(&examples, 8);
        let lengths: Vec<Vec<usize>> = packed.iter().map(|s| s.segment_lengths.clone()).collect();
        assert_eq!(lengths, [vec![6, 2], vec![5, 3], vec![4]]);
        for sequence in &packed {
            assert!(sequence.len() <= 8);
            assert_eq!(
                sequence.segment_lengths.iter().sum::<usize>(),
                sequence.len()
            );
        }
        let total: usize = packed.iter().map(SftSequence::len).sum();
        assert_eq!(total, 20);
        assert_eq!(packed[0].input_ids[6..], [200, 201]);
    }

    #[test]
    fn loss_never_crosses_segments() {
        let mut sequence = SftSequence::single(example(3, 0));
        sequence.push(&example(2, 10));
        // Targets: 0→1, 1→2, (2→10 crosses), 10→11.
        assert_eq!(sequence.loss_targets(), [true, true, false, true]);
        assert_eq!(sequence.num_loss_tokens(), 3);
        sequence.loss_mask[1] = false;
        assert_eq!(sequence.loss_targets(), [false, true, false, true]);
    }
}
