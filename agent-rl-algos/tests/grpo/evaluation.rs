//! Held-out evaluation during GRPO training: due steps are scored, the scores are logged with
//! the step metrics, and the best-scoring model is the one kept.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use agent_rl_algos::pipeline::{Evaluator, GrpoStage, Pipeline, ToolUseEvaluator};
use agent_rl_algos::toy::{ToySplit, toy_split_tasks};
use agent_rl_algos::{
    AlgoError, BestEvaluation, GrpoConfig, GrpoTrainer, StepMetrics, ToolUseScores,
};
use agent_rl_core::{ChatTokenizer, Qwen2ForCausalLm};
use agent_rl_rewards::ToolUseReward;
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};

use super::common::{chars_per_token, parameters, prompts};
use crate::B;

type Inner = <B as burn::tensor::backend::AutodiffBackend>::InnerBackend;

/// Returns scripted success rates and keeps the parameters of every model it scored.
struct Scripted {
    rates: VecDeque<f32>,
    seen: Arc<Mutex<Vec<Vec<Vec<f32>>>>>,
}

impl Evaluator<Inner> for Scripted {
    fn evaluate(
        &mut self,
        model: &Qwen2ForCausalLm<Inner>,
        _tokenizer: &Arc<ChatTokenizer>,
    ) -> Result<ToolUseScores, AlgoError> {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(parameters(model));
        }
        Ok(ToolUseScores {
            success_rate: self.rates.pop_front().unwrap_or(0.0),
            episodes: 1,
            ..ToolUseScores::default()
        })
    }
}

fn config(max_steps: usize, eval_steps: usize) -> GrpoConfig {
    let mut config = GrpoConfig {
        num_generations: 2,
        prompts_per_step: 2,
        max_steps,
        eval_steps: Some(eval_steps),
        ..GrpoConfig::default()
    }
    .with_max_completion_length(6);
    config.optimizer.learning_rate = 1e-2;
    config
}

#[test]
fn due_steps_are_scored_logged_and_the_best_model_is_kept() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let logged = Arc::new(Mutex::new(Vec::<StepMetrics>::new()));
    let sink = Arc::clone(&logged);
    let mut trainer = GrpoTrainer::builder(
        tiny_qwen2::<B>(4, &Default::default()),
        tiny_tokenizer().expect("tokenizer"),
    )
    .with_config(config(7, 2))
    .add_reward(chars_per_token())
    .with_observer(move |m: &StepMetrics| {
        if let Ok(mut steps) = sink.lock() {
            steps.push(m.clone());
        }
    })
    // Steps 2, 4, 6 and the last, 7: the best is step 4 (step 6 ties it, the earlier wins).
    .with_evaluator(Scripted {
        rates: VecDeque::from([0.25, 0.75, 0.75, 0.5]),
        seen: Arc::clone(&seen),
    })
    .build()
    .expect("trainer");
    let report = trainer.train(&prompts(4)).expect("trains");
    let logged = logged.lock().expect("lock").clone();
    let scored: Vec<usize> = logged
        .iter()
        .filter(|m| m.held_out.is_some())
        .map(|m| m.step)
        .collect();
    assert_eq!(scored, [2, 4, 6, 7]);
    let json = logged[3].to_json();
    assert_eq!(json["eval/success_rate"], serde_json::json!(0.75));
    assert!(logged[0].to_json().get("eval/success_rate").is_none());
    let best: &BestEvaluation = report.best_evaluation.as_ref().expect("best");
    assert_eq!(
        (best.step, best.scores.success_rate, &best.dir),
        (4, 0.75, &None)
    );
    let seen = seen.lock().expect("lock");
    let kept = parameters(trainer.best_model().expect("kept in memory"));
    assert_eq!(kept, seen[1], "the kept model is the one scored at step 4");
    assert_ne!(kept, seen[3], "training went on after step 4");
}

#[test]
fn a_pipeline_stage_logs_held_out_scores_and_saves_the_best_model() {
    let run = tempfile::tempdir().expect("temp dir");
    let tasks = toy_split_tasks(ToySplit::Train, 8, 1);
    let held_out = toy_split_tasks(ToySplit::HeldOut, 2, 1001);
    let stage = GrpoStage::new(config(3, 2), tasks)
        .add_reward(ToolUseReward::default())
        .with_checkpoint_every(3);
    let report = Pipeline::builder(
        tiny_qwen2::<B>(2, &Default::default()),
        agent_rl_algos::toy::with_toy_template(&tiny_tokenizer().expect("tokenizer"))
            .expect("template"),
    )
    .add_stage(stage)
    .with_evaluator(ToolUseEvaluator::new(held_out, 6))
    .with_run_dir(run.path())
    .build()
    .expect("pipeline")
    .run()
    .expect("runs");
    let metrics = std::fs::read_to_string(run.path().join("grpo_metrics.jsonl")).expect("metrics");
    let evaluated: Vec<serde_json::Value> = metrics
        .lines()
        .map(|line| serde_json::from_str(line).expect("json line"))
        .filter(|row: &serde_json::Value| row.get("eval/success_rate").is_some())
        .collect();
    assert_eq!(evaluated.len(), 2, "steps 2 and 3:\n{metrics}");
    for row in &evaluated {
        for key in [
            "eval/format_accuracy",
            "eval/argument_match",
            "eval/success_rate",
        ] {
            assert!(
                row[key].as_f64().is_some_and(|v| (0.0..=1.0).contains(&v)),
                "{key}"
            );
        }
    }
    let best = report
        .grpo()
        .and_then(|g| g.best_evaluation.clone())
        .expect("best evaluation");
    let dir = best.dir.expect("saved beside the checkpoints");
    assert!(dir.join("config.json").is_file() && dir.join("model.safetensors").is_file());
    assert!(
        report.score("after").is_some(),
        "the evaluator came back for the final score"
    );
}
