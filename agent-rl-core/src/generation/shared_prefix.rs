//! Rows that share a prefix are computed once: the K completions of a GRPO group all start
//! with the same prompt, so prefilling or scoring that prompt K times is wasted work.

use std::collections::HashMap;
use std::hash::Hash;

use burn::prelude::*;

/// Which rows of a batch are equal, and one representative of each distinct value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueRows {
    /// Index (into the batch) of the first row of each distinct value, in order of appearance.
    pub representatives: Vec<usize>,
    /// For each row, the position of its value in `representatives`.
    pub of_row: Vec<usize>,
}

impl UniqueRows {
    /// Groups equal `rows`.
    pub fn of<T: Hash + Eq>(rows: &[T]) -> Self {
        let mut seen: HashMap<&T, usize> = HashMap::new();
        let mut representatives = Vec::new();
        let of_row = rows
            .iter()
            .enumerate()
            .map(|(index, row)| {
                *seen.entry(row).or_insert_with(|| {
                    representatives.push(index);
                    representatives.len() - 1
                })
            })
            .collect();
        Self {
            representatives,
            of_row,
        }
    }

    /// Whether some row repeats another (only then does sharing save work).
    pub fn has_repeats(&self) -> bool {
        self.representatives.len() < self.of_row.len()
    }

    /// The representatives' entries of `values` (one value per row of the batch).
    pub fn pick<T: Clone>(&self, values: &[T]) -> Vec<T> {
        self.representatives
            .iter()
            .map(|&r| values[r].clone())
            .collect()
    }

    /// `of_row` as an index tensor, for `select` along the batch axis.
    pub fn of_row_tensor<B: Backend>(&self, device: &B::Device) -> Tensor<B, 1, Int> {
        index_tensor(&self.of_row, device)
    }
}

/// A 1-D int tensor of row indices.
pub(crate) fn index_tensor<B: Backend>(rows: &[usize], device: &B::Device) -> Tensor<B, 1, Int> {
    Tensor::from_data(
        TensorData::new(
            rows.iter().map(|&r| r as i64).collect::<Vec<_>>(),
            [rows.len()],
        ),
        device,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_equal_rows_in_order_of_appearance() {
        let rows = UniqueRows::of(&[vec![3, 4], vec![1], vec![3, 4], vec![1], vec![2]]);
        assert_eq!(rows.representatives, [0, 1, 4]);
        assert_eq!(rows.of_row, [0, 1, 0, 1, 2]);
        assert!(rows.has_repeats());
        assert!(!UniqueRows::of(&[1, 2, 3]).has_repeats());
        assert_eq!(
            UniqueRows::of::<u8>(&[]).representatives,
            Vec::<usize>::new()
        );
    }
}
