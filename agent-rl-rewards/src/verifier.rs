//! Outcome verifiers: user-supplied checks of how an episode ended.

use agent_rl_core::Trajectory;

use crate::error::Result;

/// Checks whether an episode reached its goal (e.g. "the environment's database ends in the
/// expected state"). Attached to a [`Target`](crate::Target) as a trait object.
pub trait OutcomeVerifier: Send + Sync {
    /// Name for logs and errors.
    fn name(&self) -> &str;

    /// `true` when the episode succeeded.
    ///
    /// # Errors
    /// [`RewardError::Scorer`](crate::RewardError::Scorer) when the check itself cannot run; a
    /// failed episode is `Ok(false)`.
    fn verify(&self, trajectory: &Trajectory) -> Result<bool>;
}

/// Succeeds when the environment's own end-of-episode reward reaches a threshold (τ-bench style
/// environments report one in [`Trajectory::environment_reward`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnvironmentRewardVerifier {
    /// Minimum environment reward counted as success.
    pub threshold: f32,
}

impl Default for EnvironmentRewardVerifier {
    /// Threshold `1.0` (τ-bench's pass value).
    fn default() -> Self {
        Self { threshold: 1.0 }
    }
}

impl OutcomeVerifier for EnvironmentRewardVerifier {
    fn name(&self) -> &str {
        "environment_reward"
    }

    fn verify(&self, trajectory: &Trajectory) -> Result<bool> {
        Ok(trajectory
            .environment_reward
            .is_some_and(|reward| reward >= self.threshold))
    }
}

/// An [`OutcomeVerifier`] from a name and a closure.
///
/// ```
/// use agent_rl_rewards::{FnVerifier, OutcomeVerifier};
/// let verifier = FnVerifier::new("has_turns", |trajectory| Ok(!trajectory.turns.is_empty()));
/// assert!(!verifier.verify(&Default::default())?);
/// # Ok::<(), agent_rl_rewards::RewardError>(())
/// ```
pub struct FnVerifier<F> {
    name: String,
    check: F,
}

impl<F> FnVerifier<F>
where
    F: Fn(&Trajectory) -> Result<bool> + Send + Sync,
{
    /// A verifier called `name` running `check`.
    pub fn new(name: impl Into<String>, check: F) -> Self {
        Self {
            name: name.into(),
            check,
        }
    }
}

impl<F> OutcomeVerifier for FnVerifier<F>
where
    F: Fn(&Trajectory) -> Result<bool> + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn verify(&self, trajectory: &Trajectory) -> Result<bool> {
        (self.check)(trajectory)
    }
}
