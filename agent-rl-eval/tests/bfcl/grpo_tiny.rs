//! The `grpo_qwen --model DIR --bfcl DIR` job end to end on a tiny checkpoint saved to a temp
//! dir: load it back, build BFCL training tasks, evaluate the held-out split, one GRPO step
//! single-turn with `ToolUseReward::default()`, evaluate again, summary in the demo's shape.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use agent_rl_algos::toy::with_toy_template;
use agent_rl_algos::{GrpoConfig, GrpoTrainer};
use agent_rl_core::weights::{
    LoadOptions, SaveOptions, load_pretrained, random_model, save_pretrained,
};
use agent_rl_core::{BurnPolicy, ChatTokenizer, Qwen2Config, Qwen2ForCausalLm, SamplingConfig};
use agent_rl_eval::bfcl::{
    BfclDataset, BfclRunConfig, BfclRunner, BfclVersion, CheckOptions, split_train_held_out,
    training_tasks,
};
use agent_rl_rewards::ToolUseReward;
use agent_rl_test_support::{tiny_config, tiny_tokenizer};
use burn::backend::{Autodiff, Flex};
use burn::module::AutodiffModule;
use serde_json::json;

use super::checker::fixture;

type Train = Autodiff<Flex>;

/// Saves a tiny random Qwen2 (context raised to 4096 for BFCL prompts) with the byte-level test
/// tokenizer and the toy tool-aware template, in Hugging Face layout.
pub fn save_tiny_checkpoint(dir: &Path) {
    let config = Qwen2Config {
        max_position_embeddings: 4096,
        ..tiny_config()
    };
    let model = random_model::<Flex>(&config, 5, 0.3, &Default::default()).expect("model");
    save_pretrained(&model, dir, SaveOptions::default()).expect("save model");
    with_toy_template(&tiny_tokenizer().expect("tokenizer"))
        .expect("template")
        .save_to_dir(dir)
        .expect("save tokenizer");
}

fn evaluate(
    model: &Qwen2ForCausalLm<Train>,
    tokenizer: &Arc<ChatTokenizer>,
    dataset: &BfclDataset,
) -> serde_json::Value {
    let config = BfclRunConfig {
        sampling: SamplingConfig::greedy(8),
        ..BfclRunConfig::default()
    };
    let mut policy = BurnPolicy::new(model.valid(), Arc::clone(tokenizer));
    let run = BfclRunner::new(dataset, BfclVersion::V4, config)
        .run(&mut policy)
        .expect("BFCL run");
    let report = run.report;
    json!({"format_accuracy": report.format_accuracy,
        "argument_match": report.argument_match_rate,
        "success_rate": report.end_to_end_success})
}

#[test]
fn tiny_checkpoint_bfcl_grpo_before_and_after() {
    let dir = tempfile::tempdir().expect("temp dir");
    save_tiny_checkpoint(dir.path());
    let tokenizer = Arc::new(ChatTokenizer::from_dir(dir.path()).expect("tokenizer loads"));
    let (model, _) =
        load_pretrained::<Train>(dir.path(), LoadOptions::default(), &Default::default())
            .expect("checkpoint loads");

    let dataset = fixture();
    let tasks = training_tasks(&dataset, &[], CheckOptions::default()).expect("tasks");
    let (train, held_out) = split_train_held_out(tasks, 0.4, 1).expect("split");
    assert_eq!((train.len(), held_out.len()), (5, 3));
    let ids: HashSet<&str> = held_out.iter().map(|task| task.id.as_str()).collect();
    let mut held_out_data = dataset.clone();
    for entries in held_out_data.categories.values_mut() {
        entries.retain(|entry| ids.contains(entry.id.as_str()));
    }
    held_out_data
        .categories
        .retain(|_, entries| !entries.is_empty());

    let before = evaluate(&model, &tokenizer, &held_out_data);
    let config = GrpoConfig {
        num_generations: 2,
        prompts_per_step: 2,
        max_steps: 1,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(8);
    let mut trainer = GrpoTrainer::builder(model, Arc::clone(&tokenizer))
        .with_config(config)
        .add_reward(ToolUseReward::default())
        .build()
        .expect("trainer");
    let report = trainer.train(&train).expect("GRPO step");
    assert_eq!(report.steps.len(), 1);
    assert!(report.steps[0].loss.is_finite());
    let after = evaluate(&trainer.into_model(), &tokenizer, &held_out_data);

    let summary = json!({"before": before, "after": after});
    for stage in ["before", "after"] {
        for key in ["format_accuracy", "argument_match", "success_rate"] {
            let value = summary[stage][key].as_f64().expect("a number");
            assert!((0.0..=1.0).contains(&value), "{stage}.{key} = {value}");
        }
    }
}
