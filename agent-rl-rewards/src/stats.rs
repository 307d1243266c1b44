//! Means over batches that leave "not applicable" (`None`) out.

use serde::Serialize;

use crate::reward::RewardValue;

/// Mean of the `Some` values; `None` when there are none. `None` entries are left out, not
/// counted as 0.
///
/// ```
/// use agent_rl_rewards::mean_score;
/// assert_eq!(mean_score([Some(1.0), None, Some(0.0)]), Some(0.5));
/// assert_eq!(mean_score([None, None]), None);
/// ```
pub fn mean_score(values: impl IntoIterator<Item = Option<f32>>) -> Option<f32> {
    let (sum, count) = values
        .into_iter()
        .flatten()
        .fold((0.0_f64, 0_usize), |(sum, count), value| {
            (sum + f64::from(value), count + 1)
        });
    (count > 0).then(|| (sum / count as f64) as f32)
}

/// The mean of one component over a batch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComponentMean {
    /// Component name (log it as `rewards/<name>/mean`).
    pub name: String,
    /// Mean over the samples where the component applied; `None` if it applied to none.
    pub mean: Option<f32>,
    /// Number of samples where it applied.
    pub count: usize,
}

/// Per-component means over a batch, in order of first appearance.
///
/// ```
/// use agent_rl_rewards::{component_means, RewardValue};
/// let batch = [RewardValue::leaf("format", Some(1.0)), RewardValue::leaf("format", None)];
/// let means = component_means(&batch);
/// assert_eq!((means[0].mean, means[0].count), (Some(1.0), 1));
/// ```
pub fn component_means(values: &[RewardValue]) -> Vec<ComponentMean> {
    let mut names: Vec<&str> = Vec::new();
    for value in values {
        for component in &value.components {
            if !names.contains(&component.name.as_str()) {
                names.push(&component.name);
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let applicable: Vec<Option<f32>> = values
                .iter()
                .filter_map(|value| value.component(name))
                .collect();
            ComponentMean {
                name: name.to_owned(),
                mean: mean_score(applicable.iter().copied()),
                count: applicable.iter().flatten().count(),
            }
        })
        .collect()
}
