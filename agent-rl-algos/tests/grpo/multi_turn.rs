//! Multi-turn rollouts: environment tokens are appended as tokens, masked out, and the episode
//! still trains.

use agent_rl_algos::{GrpoConfig, GrpoTrainer};
use agent_rl_core::{
    Action, AgentLoop, AgentLoopConfig, Environment, EnvironmentFactory, HermesToolCallParser,
    Message, SamplingConfig, StepOutcome, Task,
};
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};
use burn::module::AutodiffModule;

use super::common::{chars_per_token, parameters, prompts};
use crate::B;

/// Answers every assistant turn with a tool message (for calls) or a user nudge (for text);
/// never ends the episode itself, so only the budget and the tool cap end it.
struct Nudging;

impl Environment for Nudging {
    fn reset(&mut self, task: &Task) -> agent_rl_core::Result<Vec<Message>> {
        Ok(task.messages.clone())
    }

    fn step(&mut self, action: &Action) -> agent_rl_core::Result<StepOutcome> {
        let observation = match action {
            Action::ToolCall(call) => Message::tool(call.name.clone(), "OBSERVED"),
            Action::Respond(_) => Message::user("OBSERVED"),
        };
        Ok(StepOutcome {
            observation,
            done: false,
            reward: None,
            info: serde_json::Value::Null,
        })
    }
}

fn nudging() -> impl EnvironmentFactory {
    || Box::new(Nudging) as Box<dyn Environment>
}

#[test]
fn environment_turns_are_tokens_with_mask_zero_and_generated_ids_are_kept() {
    let tokenizer = tiny_tokenizer().expect("fixture tokenizer");
    let model = tiny_qwen2::<B>(4, &Default::default()).valid();
    let parser = HermesToolCallParser::default();
    let mut sampling = SamplingConfig::greedy(48);
    // Short turns so that several environment turns fit in the budget.
    sampling.stop_strings = vec!["\n".into()];
    let config = AgentLoopConfig {
        sampling,
        max_tool_iterations: 4,
        max_prompt_length: None,
        max_tool_calls_per_turn: None,
    };
    let factory = nudging();
    let tasks = prompts(2);
    let episodes = AgentLoop::new(&model, &tokenizer, &parser, config)
        .run(&tasks, 2, Some(&factory))
        .expect("rollout");
    assert_eq!(episodes.len(), 4);
    let mut saw_environment_turn = false;
    for episode in &episodes {
        let completion = episode.completion_ids();
        assert_eq!(completion.len(), episode.policy_mask.len());
        assert_eq!(completion.len(), episode.logprobs.len());
        assert!(completion.len() <= 48, "budget respected");
        // The environment's tokens decode to its observation, rendered by the template.
        let environment_ids: Vec<u32> = completion
            .iter()
            .zip(&episode.policy_mask)
            .filter(|&(_, &policy)| !policy)
            .map(|(&id, _)| id)
            .collect();
        let environment_text = tokenizer.decode(&environment_ids, false).expect("decode");
        if episode.trajectory.turns.len() > 1 {
            saw_environment_turn = true;
            assert!(
                environment_text.contains("OBSERVED"),
                "{environment_text:?}"
            );
            assert!(environment_text.contains("<|im_start|>assistant"));
        }
        // Environment tokens carry no sampling log-probability; policy tokens do.
        for (&policy, &logprob) in episode.policy_mask.iter().zip(&episode.logprobs) {
            if policy {
                assert!(logprob <= 0.0 && logprob.is_finite());
            } else {
                assert_eq!(logprob, 0.0);
            }
        }
        // Token in, token out: the policy's tokens of each turn are what it sampled, in order.
        let policy_tokens = episode.num_policy_tokens();
        let per_turn: usize = episode.trajectory.turns.iter().map(|t| t.num_tokens).sum();
        assert_eq!(policy_tokens, per_turn);
    }
    assert!(saw_environment_turn, "some episode had more than one turn");
}

#[test]
fn multi_turn_episodes_train_with_finite_loss() {
    let mut config = GrpoConfig {
        num_generations: 4,
        prompts_per_step: 2,
        max_steps: 2,
        max_tool_iterations: 3,
        beta: 0.04,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(24);
    config.sampling.stop_strings = vec!["\n".into()];
    config.optimizer.learning_rate = 1e-3;
    let model = tiny_qwen2::<B>(6, &Default::default());
    let before = parameters(&model);
    let mut trainer = GrpoTrainer::builder(model, tiny_tokenizer().expect("fixture tokenizer"))
        .with_config(config)
        .add_reward(chars_per_token())
        .with_environment(nudging())
        .build()
        .expect("valid trainer");
    let report = trainer.train(&prompts(3)).expect("training runs");
    assert_eq!(report.global_step, 2);
    for metrics in &report.steps {
        assert!(metrics.loss.is_finite() && metrics.grad_norm.is_some_and(f32::is_finite));
    }
    let after = parameters(trainer.model());
    assert!(
        before.iter().zip(&after).any(|(a, b)| a != b),
        "the policy moved"
    );
}

#[test]
fn cached_turns_sample_what_re_prefilled_turns_sample() {
    let tokenizer = tiny_tokenizer().expect("fixture tokenizer");
    let model = tiny_qwen2::<B>(7, &Default::default()).valid();
    let parser = HermesToolCallParser::default();
    let mut sampling = SamplingConfig::greedy(64);
    sampling.temperature = 1.0;
    sampling.seed = 11;
    // Short turns of different lengths (about one token in ten ends a turn), so episodes leave
    // the batch at different steps and carry caches of different lengths into the next turn.
    sampling.stop_token_ids = (0..300).step_by(10).collect();
    let config = AgentLoopConfig {
        sampling,
        max_tool_iterations: 6,
        max_prompt_length: None,
        max_tool_calls_per_turn: None,
    };
    let factory = nudging();
    let tasks = prompts(3);
    let run = |reuse: bool| {
        AgentLoop::new(&model, &tokenizer, &parser, config.clone())
            .with_cache_reuse(reuse)
            .run(&tasks, 2, Some(&factory))
            .expect("rollout")
    };
    let cached = run(true);
    let re_prefilled = run(false);
    let turns: Vec<usize> = cached.iter().map(|e| e.trajectory.turns.len()).collect();
    assert!(
        turns.iter().any(|&t| t >= 3) && turns.iter().any(|&t| t != turns[0]),
        "episodes ran three turns or more, not all alike: {turns:?}"
    );
    for (a, b) in cached.iter().zip(&re_prefilled) {
        assert_eq!(a.token_ids, b.token_ids, "task {}", a.task_index);
        assert_eq!(a.policy_mask, b.policy_mask);
        assert_eq!(a.truncated, b.truncated);
        assert_eq!(a.logprobs.len(), b.logprobs.len());
        for (x, y) in a.logprobs.iter().zip(&b.logprobs) {
            assert!((x - y).abs() <= 1e-4, "log-probs {x} vs {y}");
        }
    }
}
