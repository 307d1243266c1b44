//! A curriculum task sampler: difficulty levels with promotion on success, replay of easier levels,
//! and a mixing ratio for scenarios injected during training (distribution shift).

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{AlgoError, Result};

/// Settings of a [`CurriculumSampler`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CurriculumConfig {
    /// Promote to the next level when the rolling success rate on the current level reaches this.
    /// Default 0.8. Range (0, 1].
    pub promote_threshold: f32,
    /// Episodes of the current level in the rolling window; promotion needs a full window.
    /// Default 32. Must be ≥ 1.
    pub window: usize,
    /// Fraction of samples drawn from already-passed easier levels (against forgetting). Default 0.1.
    pub replay_ratio: f32,
    /// Fraction of samples drawn from the injected new scenarios once any are added. Default 0.2.
    /// `replay_ratio + new_scenario_ratio` must be ≤ 1.
    pub new_scenario_ratio: f32,
    /// Seed of the sampler. Default 0.
    pub seed: u64,
}

impl Default for CurriculumConfig {
    fn default() -> Self {
        Self {
            promote_threshold: 0.8,
            window: 32,
            replay_ratio: 0.1,
            new_scenario_ratio: 0.2,
            seed: 0,
        }
    }
}

impl CurriculumConfig {
    /// Checks every field's range.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] naming the field and its valid range.
    pub fn validate(&self) -> Result<()> {
        if !(self.promote_threshold > 0.0 && self.promote_threshold <= 1.0) {
            return Err(AlgoError::config(
                "promote_threshold",
                "must be in (0, 1] (e.g. 0.8)",
            ));
        }
        if self.window == 0 {
            return Err(AlgoError::config("window", "is 0; must be >= 1 episodes"));
        }
        for (field, ratio) in [
            ("replay_ratio", self.replay_ratio),
            ("new_scenario_ratio", self.new_scenario_ratio),
        ] {
            if !(0.0..=1.0).contains(&ratio) {
                return Err(AlgoError::config(
                    field,
                    format!("is {ratio}; must be in [0, 1]"),
                ));
            }
        }
        if self.replay_ratio + self.new_scenario_ratio > 1.0 {
            return Err(AlgoError::config(
                "new_scenario_ratio",
                "replay_ratio + new_scenario_ratio exceeds 1; lower one of them",
            ));
        }
        Ok(())
    }
}

/// Where a sampled task came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskSource {
    /// The current difficulty level.
    Current,
    /// An easier, already-passed level.
    Replay,
    /// The pool of injected new scenarios.
    NewScenario,
}

/// One sampled task with its provenance; report its outcome with [`CurriculumSampler::record`].
#[derive(Debug, Clone, PartialEq)]
pub struct SampledTask<T> {
    /// The task.
    pub task: T,
    /// Its difficulty level (`None` for new scenarios).
    pub level: Option<usize>,
    /// Where it came from.
    pub source: TaskSource,
}

/// What a curriculum did in one training step (logged as `curriculum/*` with the step metrics).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CurriculumMetrics {
    /// `curriculum/level`: the sampler's level after the step's outcomes were recorded.
    pub level: usize,
    /// `curriculum/window_success`: success rate over the current level's rolling window
    /// (`None` right after a promotion).
    pub window_success: Option<f32>,
    /// `curriculum/window_episodes`: outcomes in that window (a full window below the last
    /// level always has a success rate under the threshold: reaching it promotes at once).
    pub window_episodes: usize,
    /// `curriculum/draws/current`: tasks drawn this step from the level current at the draw.
    pub current: usize,
    /// `curriculum/draws/replay`: tasks drawn from easier levels.
    pub replay: usize,
    /// `curriculum/draws/new_scenario`: tasks drawn from the injected new scenarios.
    pub new_scenario: usize,
}

impl CurriculumMetrics {
    /// Counts `draws` by source; `level` and `window_success` come from `sampler` (call after
    /// recording the step's outcomes).
    pub fn of<T: Clone>(draws: &[SampledTask<T>], sampler: &CurriculumSampler<T>) -> Self {
        let count = |source| draws.iter().filter(|d| d.source == source).count();
        Self {
            level: sampler.level(),
            window_success: sampler.success_rate(),
            window_episodes: sampler.window_len(),
            current: count(TaskSource::Current),
            replay: count(TaskSource::Replay),
            new_scenario: count(TaskSource::NewScenario),
        }
    }

    /// The metrics as `(name, value)` pairs (`curriculum/level`, …).
    pub fn named(&self) -> Vec<(String, f64)> {
        let mut out = vec![("curriculum/level".to_owned(), self.level as f64)];
        if let Some(rate) = self.window_success {
            out.push(("curriculum/window_success".into(), f64::from(rate)));
        }
        out.extend([
            (
                "curriculum/window_episodes".into(),
                self.window_episodes as f64,
            ),
            ("curriculum/draws/current".into(), self.current as f64),
            ("curriculum/draws/replay".into(), self.replay as f64),
            (
                "curriculum/draws/new_scenario".into(),
                self.new_scenario as f64,
            ),
        ]);
        out
    }
}

/// Samples tasks by difficulty level and promotes when the current level is mastered.
///
/// ```
/// use agent_rl_algos::{CurriculumConfig, CurriculumSampler};
/// let config = CurriculumConfig { window: 4, promote_threshold: 0.75, ..CurriculumConfig::default() };
/// let mut sampler = CurriculumSampler::new(vec![vec!["1+1"], vec!["12*7"]], config)?;
/// for _ in 0..4 {
///     sampler.record(Some(0), true);
/// }
/// assert_eq!(sampler.level(), 1);
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
#[derive(Debug, Clone)]
pub struct CurriculumSampler<T> {
    levels: Vec<Vec<T>>,
    new_scenarios: Vec<T>,
    current: usize,
    outcomes: VecDeque<bool>,
    config: CurriculumConfig,
    rng: ChaCha8Rng,
}

impl<T: Clone> CurriculumSampler<T> {
    /// A sampler over `levels` (easiest first), starting at level 0.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] for an invalid config; [`AlgoError::InvalidInput`] when there are
    /// no levels or a level has no tasks.
    pub fn new(levels: Vec<Vec<T>>, config: CurriculumConfig) -> Result<Self> {
        config.validate()?;
        if levels.is_empty() {
            return Err(AlgoError::input(
                "levels",
                "is empty; give at least one difficulty level",
            ));
        }
        if let Some(i) = levels.iter().position(Vec::is_empty) {
            return Err(AlgoError::input(format!("levels[{i}]"), "has no tasks"));
        }
        let rng = ChaCha8Rng::seed_from_u64(config.seed);
        Ok(Self {
            levels,
            new_scenarios: Vec::new(),
            current: 0,
            outcomes: VecDeque::new(),
            config,
            rng,
        })
    }

    /// Adds scenarios to the new-scenario pool; from now on `new_scenario_ratio` of the samples
    /// come from it.
    pub fn add_new_scenarios(&mut self, tasks: impl IntoIterator<Item = T>) {
        self.new_scenarios.extend(tasks);
    }

    /// The current difficulty level (0 = easiest).
    pub fn level(&self) -> usize {
        self.current
    }

    /// Number of difficulty levels.
    pub fn num_levels(&self) -> usize {
        self.levels.len()
    }

    /// Outcomes in the rolling window of the current level.
    pub fn window_len(&self) -> usize {
        self.outcomes.len()
    }

    /// Success rate over the rolling window of the current level (`None` before any outcome).
    pub fn success_rate(&self) -> Option<f32> {
        if self.outcomes.is_empty() {
            return None;
        }
        Some(self.outcomes.iter().filter(|&&ok| ok).count() as f32 / self.outcomes.len() as f32)
    }

    /// Draws `count` tasks: new scenarios with probability `new_scenario_ratio` (when any exist),
    /// easier levels with probability `replay_ratio` (when any exist), else the current level.
    pub fn sample(&mut self, count: usize) -> Vec<SampledTask<T>> {
        (0..count).map(|_| self.sample_one()).collect()
    }

    fn sample_one(&mut self) -> SampledTask<T> {
        let u: f32 = self.rng.random();
        if !self.new_scenarios.is_empty() && u < self.config.new_scenario_ratio {
            let i = self.rng.random_range(0..self.new_scenarios.len());
            return SampledTask {
                task: self.new_scenarios[i].clone(),
                level: None,
                source: TaskSource::NewScenario,
            };
        }
        let replay =
            self.current > 0 && u < self.config.new_scenario_ratio + self.config.replay_ratio;
        let (level, source) = if replay {
            (self.rng.random_range(0..self.current), TaskSource::Replay)
        } else {
            (self.current, TaskSource::Current)
        };
        let tasks = &self.levels[level];
        let i = self.rng.random_range(0..tasks.len());
        SampledTask {
            task: tasks[i].clone(),
            level: Some(level),
            source,
        }
    }

    /// Records an episode outcome. Only outcomes at the current level count toward promotion.
    /// Returns the new level when this outcome triggered a promotion (the window then restarts).
    pub fn record(&mut self, level: Option<usize>, success: bool) -> Option<usize> {
        if level != Some(self.current) {
            return None;
        }
        self.outcomes.push_back(success);
        if self.outcomes.len() > self.config.window {
            self.outcomes.pop_front();
        }
        let full = self.outcomes.len() == self.config.window;
        let passed = self
            .success_rate()
            .is_some_and(|rate| rate >= self.config.promote_threshold);
        if full && passed && self.current + 1 < self.levels.len() {
            self.current += 1;
            self.outcomes.clear();
            return Some(self.current);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampler(config: CurriculumConfig) -> CurriculumSampler<u32> {
        CurriculumSampler::new(vec![vec![0, 1, 2], vec![10, 11], vec![20]], config).expect("valid")
    }

    #[test]
    fn promotes_only_on_a_full_window_above_threshold() {
        let mut s = sampler(CurriculumConfig {
            window: 4,
            promote_threshold: 0.75,
            ..Default::default()
        });
        assert_eq!(s.record(Some(0), true), None);
        assert_eq!(s.record(Some(0), false), None);
        assert_eq!(s.record(Some(0), true), None);
        assert_eq!(
            s.record(Some(0), true),
            Some(1),
            "3/4 = 0.75 on a full window"
        );
        assert_eq!(s.success_rate(), None, "window restarts");
        assert_eq!(
            s.record(Some(0), true),
            None,
            "replayed levels do not count"
        );
        for _ in 0..4 {
            s.record(Some(1), true);
        }
        assert_eq!(s.level(), 2);
        for _ in 0..8 {
            assert_eq!(s.record(Some(2), true), None, "no level past the last");
        }
    }

    #[test]
    fn same_seed_same_samples_and_ratios_hold() {
        let config = CurriculumConfig {
            replay_ratio: 0.3,
            new_scenario_ratio: 0.2,
            seed: 7,
            ..Default::default()
        };
        let mut a = sampler(config.clone());
        let mut b = sampler(config);
        assert_eq!(a.sample(50), b.sample(50));
        assert!(
            a.sample(100)
                .iter()
                .all(|t| t.source == TaskSource::Current),
            "level 0: no replay, no pool"
        );
        for _ in 0..32 {
            a.record(Some(0), true);
        }
        a.add_new_scenarios([99, 98]);
        let draws = a.sample(4000);
        let frac = |src| draws.iter().filter(|t| t.source == src).count() as f32 / 4000.0;
        assert!((frac(TaskSource::NewScenario) - 0.2).abs() < 0.03);
        assert!((frac(TaskSource::Replay) - 0.3).abs() < 0.03);
        assert!(draws.iter().all(|t| match t.source {
            TaskSource::Current => t.level == Some(1) && t.task >= 10,
            TaskSource::Replay => t.level == Some(0) && t.task < 10,
            TaskSource::NewScenario => t.level.is_none() && t.task >= 98,
        }));
    }

    #[test]
    fn rejects_bad_configs_and_levels() {
        let bad = CurriculumConfig {
            replay_ratio: 0.6,
            new_scenario_ratio: 0.6,
            ..Default::default()
        };
        assert!(CurriculumSampler::new(vec![vec![1]], bad).is_err());
        assert!(CurriculumSampler::<u32>::new(vec![], CurriculumConfig::default()).is_err());
        assert!(CurriculumSampler::<u32>::new(vec![vec![]], CurriculumConfig::default()).is_err());
    }
}
