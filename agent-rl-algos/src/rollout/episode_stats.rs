//! Statistics of a rollout batch every RL trainer reports: completion lengths, tool use, token
//! counts, and each task's outcome successes.

use agent_rl_core::Episode;
use agent_rl_rewards::{Outcome, Sample, Target};

use crate::error::Result;
use crate::metrics::CompletionStats;

/// Length, tool and token statistics of a batch of episodes.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct EpisodeStats {
    /// `completions/*`.
    pub completions: CompletionStats,
    /// `tools/calls_per_episode`.
    pub tool_calls_per_episode: f32,
    /// `tools/failure_frequency` (`None` when no call was attempted).
    pub tool_failure_frequency: Option<f32>,
    /// Tokens the policy generated.
    pub generated_tokens: usize,
    /// Prompt + completion tokens.
    pub total_tokens: u64,
}

impl EpisodeStats {
    /// The statistics of `episodes`.
    pub fn of(episodes: &[Episode]) -> Self {
        let lengths: Vec<(usize, bool)> = episodes
            .iter()
            .map(|e| (e.policy_mask.len(), e.truncated))
            .collect();
        let (mut attempted, mut malformed) = (0usize, 0usize);
        for turn in episodes.iter().flat_map(|e| &e.trajectory.turns) {
            attempted += turn.parsed.attempted_calls();
            malformed += turn.parsed.malformed.len();
        }
        Self {
            completions: CompletionStats::from_lengths(&lengths),
            tool_calls_per_episode: attempted as f32 / episodes.len().max(1) as f32,
            tool_failure_frequency: (attempted > 0).then(|| malformed as f32 / attempted as f32),
            generated_tokens: episodes.iter().map(Episode::num_policy_tokens).sum(),
            total_tokens: episodes.iter().map(|e| e.token_ids.len() as u64).sum(),
        }
    }
}

/// Per task (by `task_index`), the outcome successes of its episodes (`None` where the task's
/// target judges no outcome): what a curriculum sampler records.
///
/// # Errors
/// A reward error from judging an outcome.
pub(crate) fn task_successes(
    episodes: &[Episode],
    targets: &[Target],
) -> Result<Vec<Vec<Option<bool>>>> {
    let mut successes = vec![Vec::new(); targets.len()];
    for episode in episodes {
        let sample = Sample::new(&episode.trajectory, &targets[episode.task_index]);
        successes[episode.task_index].push(Outcome::default().succeeded(sample)?);
    }
    Ok(successes)
}
