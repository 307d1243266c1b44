//! [`evaluate_tool_use`]: the three tool-use metrics of a policy on tasks with targets.

use agent_rl_core::{
    AgentLoop, AgentLoopConfig, ChatTokenizer, EnvironmentFactory, Qwen2ForCausalLm, Task,
    ToolCallParser,
};
use agent_rl_rewards::matching::{MatchOptions, match_calls};
use agent_rl_rewards::{Outcome, Sample, Target, ToolCallFormat};
use burn::tensor::backend::Backend;
use serde::{Deserialize, Serialize};

use crate::error::Result;

/// Tool-use quality over a set of episodes, each a fraction in `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolUseScores {
    /// Episodes that attempted at least one call and whose every call parsed, named an offered
    /// tool and satisfied its schema.
    pub format_accuracy: f32,
    /// Episodes whose calls match the expected calls exactly (names and every argument; BFCL
    /// semantics), among the episodes whose target names calls.
    pub argument_match: f32,
    /// Episodes whose outcome is right (final answer / verifier; the calls when the target has
    /// neither).
    pub success_rate: f32,
    /// Episodes evaluated.
    pub episodes: usize,
}

/// Runs one episode per task with `config` (greedy sampling for a deterministic evaluation)
/// and scores it.
///
/// # Errors
/// Rollout failures and broken targets (`task.data["target"]`).
pub fn evaluate_tool_use<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    tokenizer: &ChatTokenizer,
    parser: &dyn ToolCallParser,
    tasks: &[Task],
    environments: Option<&dyn EnvironmentFactory>,
    config: AgentLoopConfig,
) -> Result<ToolUseScores> {
    let targets = tasks
        .iter()
        .map(Target::from_task)
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let episodes = AgentLoop::new(model, tokenizer, parser, config).run(tasks, 1, environments)?;
    let (mut format, mut arguments, mut with_calls, mut success) = (0usize, 0usize, 0usize, 0usize);
    let options = MatchOptions::bfcl();
    for episode in &episodes {
        let trajectory = &episode.trajectory;
        let target = &targets[episode.task_index];
        let sample = Sample::new(trajectory, target);
        let attempted: usize = trajectory
            .turns
            .iter()
            .map(|t| t.parsed.attempted_calls())
            .sum();
        if attempted > 0 && ToolCallFormat.score_sample(sample)? == Some(1.0) {
            format += 1;
        }
        if let Some(expected) = &target.expected_calls {
            with_calls += 1;
            let calls: Vec<_> = trajectory.tool_calls().cloned().collect();
            if match_calls(&calls, expected, &options).is_exact() {
                arguments += 1;
            }
        }
        if Outcome::default().succeeded(sample)? == Some(true) {
            success += 1;
        }
    }
    let fraction = |n: usize, of: usize| if of == 0 { 0.0 } else { n as f32 / of as f32 };
    Ok(ToolUseScores {
        format_accuracy: fraction(format, episodes.len()),
        argument_match: fraction(arguments, with_calls),
        success_rate: fraction(success, episodes.len()),
        episodes: episodes.len(),
    })
}
