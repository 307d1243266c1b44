//! The [`Reward`] trait, its input ([`Sample`]) and output ([`RewardValue`]).

use agent_rl_core::Trajectory;
use serde::Serialize;

use crate::combinators::{Clipped, Weighted};
use crate::error::{Result, RewardError};
use crate::target::Target;

/// One thing to score: a finished trajectory and the target of its task.
#[derive(Debug, Clone, Copy)]
pub struct Sample<'a> {
    /// The episode as the trainer sees it: offered tools, assistant turns with their parsed (and
    /// malformed) calls, tool results, and the final answer.
    pub trajectory: &'a Trajectory,
    /// What a good episode achieves: expected calls, expected answer, outcome verifier.
    pub target: &'a Target,
}

impl<'a> Sample<'a> {
    /// A sample from a trajectory and its target.
    pub fn new(trajectory: &'a Trajectory, target: &'a Target) -> Self {
        Self { trajectory, target }
    }
}

/// One named part of a reward's score, for logging (`rewards/<name>/mean`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Component {
    /// Component name: a reward's own name, or `reward/part` for its parts.
    pub name: String,
    /// The value; `None` when not applicable to this sample (excluded from means).
    pub value: Option<f32>,
}

impl Component {
    /// A component.
    pub fn new(name: impl Into<String>, value: Option<f32>) -> Self {
        Self {
            name: name.into(),
            value,
        }
    }
}

/// What a reward says about one sample: a score and its components.
///
/// `score == None` means "not applicable to this sample": combinators leave it out of weighted
/// sums, and [`mean_score`](crate::mean_score) leaves it out of means (it is not a 0).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct RewardValue {
    /// The score, or `None` when the reward does not apply.
    pub score: Option<f32>,
    /// The reward's own score under its name first, then its parts (`name/part`) and, for
    /// combinators, the components of the rewards they combine.
    pub components: Vec<Component>,
}

impl RewardValue {
    /// A value with a single component: the reward's own score under `name`.
    pub fn leaf(name: &str, score: Option<f32>) -> Self {
        Self {
            score,
            components: vec![Component::new(name, score)],
        }
    }

    /// The value of the component called `name`, if there is one (`Some(None)` when it is
    /// present but not applicable).
    pub fn component(&self, name: &str) -> Option<Option<f32>> {
        self.components
            .iter()
            .find(|component| component.name == name)
            .map(|component| component.value)
    }
}

/// A reward: scores a batch of samples at once (a learned reward model needs batches).
///
/// Implementations must return exactly one [`RewardValue`] per sample, in order. A malformed model
/// output is scored, never an error; errors are for broken inputs (schemas, targets, configs).
///
/// ```
/// use agent_rl_core::Trajectory;
/// use agent_rl_rewards::{Reward, RewardValue, Sample, Target};
/// /// Pays 1 when the episode has at most two assistant turns.
/// struct Short;
/// impl Reward for Short {
///     fn name(&self) -> &str { "short" }
///     fn score_batch(&self, samples: &[Sample<'_>]) -> agent_rl_rewards::Result<Vec<RewardValue>> {
///         Ok(samples.iter().map(|s| {
///             RewardValue::leaf("short", Some(if s.trajectory.turns.len() <= 2 { 1.0 } else { 0.0 }))
///         }).collect())
///     }
/// }
/// let (trajectory, target) = (Trajectory::default(), Target::default());
/// assert_eq!(Short.score(Sample::new(&trajectory, &target))?.score, Some(1.0));
/// # Ok::<(), agent_rl_rewards::RewardError>(())
/// ```
pub trait Reward: Send + Sync {
    /// The reward's name (used as its component name and in logs).
    fn name(&self) -> &str;

    /// Scores every sample; one value per sample, in order.
    ///
    /// # Errors
    /// A [`RewardError`] for broken inputs (bad schema, unknown tool in a target, bad config, a
    /// failing scorer), never for bad model output.
    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>>;

    /// Scores one sample.
    ///
    /// # Errors
    /// As [`Reward::score_batch`].
    fn score(&self, sample: Sample<'_>) -> Result<RewardValue> {
        let mut values = self.score_batch(std::slice::from_ref(&sample))?;
        check_batch_length(self.name(), 1, values.len())?;
        Ok(values.swap_remove(0))
    }
}

impl<R: Reward + ?Sized> Reward for Box<R> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>> {
        (**self).score_batch(samples)
    }
}

impl<R: Reward + ?Sized> Reward for std::sync::Arc<R> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>> {
        (**self).score_batch(samples)
    }
}

/// Chainable adapters for every [`Reward`].
pub trait RewardExt: Reward + Sized {
    /// This reward with its score multiplied by `weight`.
    fn weighted(self, weight: f32) -> Weighted<Self> {
        Weighted::new(self, weight)
    }

    /// This reward with its score clamped to `[min, max]`.
    ///
    /// # Errors
    /// [`RewardError::InvalidConfig`] unless `min <= max` and neither is NaN.
    fn clipped(self, min: f32, max: f32) -> Result<Clipped<Self>> {
        Clipped::new(self, min, max)
    }

    /// This reward as a trait object.
    fn boxed(self) -> Box<dyn Reward>
    where
        Self: 'static,
    {
        Box::new(self)
    }
}

impl<R: Reward> RewardExt for R {}

/// Checks that a reward returned one value per sample.
pub(crate) fn check_batch_length(reward: &str, expected: usize, found: usize) -> Result<()> {
    if expected == found {
        Ok(())
    } else {
        Err(RewardError::BatchLength {
            reward: reward.to_owned(),
            expected,
            found,
        })
    }
}

/// Scores each sample independently with `score_one` (for rule-based rewards).
pub(crate) fn score_each(
    samples: &[Sample<'_>],
    mut score_one: impl FnMut(Sample<'_>) -> Result<RewardValue>,
) -> Result<Vec<RewardValue>> {
    samples.iter().map(|sample| score_one(*sample)).collect()
}
