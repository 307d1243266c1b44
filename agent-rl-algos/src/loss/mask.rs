//! The loss mask of a batch of completions: policy tokens only, padded, truncation-aware.

use burn::tensor::{Tensor, TensorData, backend::Backend};

use crate::error::{AlgoError, Result};

/// Builds the `[batch, steps]` loss mask (1.0 = token in the loss).
///
/// `policy_tokens[i][t]` is true for tokens the policy generated (completion text, tool-call
/// tokens) and false for tokens the environment appended (tool results) and padding; rows are
/// right-padded with 0 up to `steps`. With `mask_truncated_completions`, rows whose `truncated`
/// flag is set (cut off by the length budget) are zeroed entirely, as TRL/DAPO do.
///
/// # Shapes
/// - returns `[policy_tokens.len(), steps]`
///
/// # Errors
/// [`AlgoError::InvalidInput`] when `truncated` has a different length or a row is longer than `steps`.
pub fn completion_loss_mask<B: Backend>(
    policy_tokens: &[Vec<bool>],
    truncated: &[bool],
    mask_truncated_completions: bool,
    steps: usize,
    device: &B::Device,
) -> Result<Tensor<B, 2>> {
    if truncated.len() != policy_tokens.len() {
        return Err(AlgoError::input(
            "truncated",
            format!(
                "has {} entries for {} completions",
                truncated.len(),
                policy_tokens.len()
            ),
        ));
    }
    let mut data = vec![0.0f32; policy_tokens.len() * steps];
    for (i, (row, &cut)) in policy_tokens.iter().zip(truncated).enumerate() {
        if row.len() > steps {
            return Err(AlgoError::input(
                format!("policy_tokens[{i}]"),
                format!("has {} tokens, more than steps = {steps}", row.len()),
            ));
        }
        if mask_truncated_completions && cut {
            continue;
        }
        for (t, &keep) in row.iter().enumerate() {
            data[i * steps + t] = f32::from(u8::from(keep));
        }
    }
    Ok(Tensor::from_data(
        TensorData::new(data, [policy_tokens.len(), steps]),
        device,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::Flex;

    #[test]
    fn pads_masks_tool_tokens_and_truncated_rows() {
        let rows = vec![vec![true, true, false, true], vec![true], vec![true, true]];
        let device = Default::default();
        let mask = completion_loss_mask::<Flex>(&rows, &[false, false, true], true, 5, &device)
            .expect("valid");
        let values: Vec<f32> = mask.into_data().iter::<f32>().collect();
        assert_eq!(
            values,
            [[1., 1., 0., 1., 0.], [1., 0., 0., 0., 0.], [0.; 5]].concat(),
            "tool token masked, padding 0, truncated row dropped"
        );
        let kept = completion_loss_mask::<Flex>(&rows, &[false, false, true], false, 5, &device)
            .expect("valid");
        assert_eq!(kept.sum().into_scalar(), 6.0, "3 + 1 + 2 policy tokens");
        assert!(completion_loss_mask::<Flex>(&rows, &[false], true, 5, &device).is_err());
        assert!(completion_loss_mask::<Flex>(&rows, &[false; 3], true, 3, &device).is_err());
    }
}
