//! Combining rewards: scaling, weighted sums, group-normalised sums, clipping.
//!
//! Every combinator leaves `None` ("not applicable") scores out: they add nothing to a sum and are
//! never counted as 0.

mod clipped;
mod normalized_sum;
mod weighted;
mod weighted_sum;

pub use clipped::Clipped;
pub use normalized_sum::NormalizedSum;
pub use weighted::Weighted;
pub use weighted_sum::WeightedSum;

use crate::error::{Result, RewardError};

/// Checks that a weight is finite.
pub(crate) fn check_weight(reward: &str, weight: f32) -> Result<()> {
    if weight.is_finite() {
        Ok(())
    } else {
        Err(RewardError::InvalidConfig {
            field: format!("weight of `{reward}`"),
            reason: format!("must be finite, found {weight}"),
        })
    }
}
