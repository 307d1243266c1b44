//! Episodes → padded token rows for teacher-forced scoring.

use agent_rl_core::Episode;
use burn::tensor::{Int, Tensor, TensorData, backend::Backend};

/// Episodes laid out as `[left-padded prompt | right-padded completion]` rows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TokenRows {
    /// `[batch, prompt_width + completion_len]` ids (padding = the pad id).
    pub ids: Vec<Vec<u32>>,
    /// Same shape: true for real tokens.
    pub attention: Vec<Vec<bool>>,
    /// Width of the completion part (the longest completion, at least 1).
    pub completion_len: usize,
    /// Per row, the completion's policy-token mask (unpadded).
    pub policy_tokens: Vec<Vec<bool>>,
    /// Per row, whether the completion budget cut it off.
    pub truncated: Vec<bool>,
}

impl TokenRows {
    /// Lays out `episodes`, padding with `pad_id`.
    pub fn new(episodes: &[&Episode], pad_id: u32) -> Self {
        let prompt_width = episodes.iter().map(|e| e.prompt_len).max().unwrap_or(1);
        let completion_len = episodes
            .iter()
            .map(|e| e.policy_mask.len())
            .max()
            .unwrap_or(0)
            .max(1);
        let mut ids = Vec::with_capacity(episodes.len());
        let mut attention = Vec::with_capacity(episodes.len());
        for episode in episodes {
            let left = prompt_width - episode.prompt_len;
            let right = completion_len - episode.policy_mask.len();
            let mut row = vec![pad_id; left];
            row.extend_from_slice(&episode.token_ids);
            row.extend(std::iter::repeat_n(pad_id, right));
            let mut mask = vec![false; left];
            mask.extend(std::iter::repeat_n(true, episode.token_ids.len()));
            mask.extend(std::iter::repeat_n(false, right));
            ids.push(row);
            attention.push(mask);
        }
        Self {
            ids,
            attention,
            completion_len,
            policy_tokens: episodes.iter().map(|e| e.policy_mask.clone()).collect(),
            truncated: episodes.iter().map(|e| e.truncated).collect(),
        }
    }

    /// The rows at `indices`, in that order (same widths).
    pub fn select(&self, indices: &[usize]) -> Self {
        Self {
            ids: indices.iter().map(|&i| self.ids[i].clone()).collect(),
            attention: indices.iter().map(|&i| self.attention[i].clone()).collect(),
            completion_len: self.completion_len,
            policy_tokens: indices
                .iter()
                .map(|&i| self.policy_tokens[i].clone())
                .collect(),
            truncated: indices.iter().map(|&i| self.truncated[i]).collect(),
        }
    }

    /// The ids as an Int tensor on `device`.
    ///
    /// # Shapes
    /// - returns `[batch, prompt_width + completion_len]`
    pub fn ids_tensor<B: Backend>(&self, device: &B::Device) -> Tensor<B, 2, Int> {
        let batch = self.ids.len();
        let width = self.ids.first().map_or(0, Vec::len);
        let flat: Vec<i64> = self.ids.iter().flatten().map(|&id| i64::from(id)).collect();
        Tensor::from_data(TensorData::new(flat, [batch, width]), device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_rl_core::Trajectory;

    fn episode(prompt: &[u32], completion: &[u32], mask: &[bool]) -> Episode {
        Episode {
            task_index: 0,
            token_ids: [prompt, completion].concat(),
            prompt_len: prompt.len(),
            policy_mask: mask.to_vec(),
            logprobs: vec![-1.0; completion.len()],
            truncated: false,
            trajectory: Trajectory::default(),
        }
    }

    #[test]
    fn pads_prompts_left_and_completions_right() {
        let a = episode(&[1, 2, 3], &[4], &[true]);
        let b = episode(&[5], &[6, 7, 8], &[true, false, true]);
        let rows = TokenRows::new(&[&a, &b], 0);
        assert_eq!(
            rows.ids,
            vec![vec![1, 2, 3, 4, 0, 0], vec![0, 0, 5, 6, 7, 8]]
        );
        assert_eq!(rows.completion_len, 3);
        assert_eq!(
            rows.attention[1],
            vec![false, false, true, true, true, true]
        );
        assert_eq!(rows.policy_tokens[1], vec![true, false, true]);
    }
}
