//! What a reward model learns of the request, kind of pair by kind of pair.
//!
//! ```text
//! cargo run --release -p agent-rl-experiments --bin rm_pair_kinds -- --seeds 1,2,3
//! cargo run --release -p agent-rl-experiments --bin rm_pair_kinds -- --seeds 1,2,3 --request-split
//! ```
//! The reward model of the RLHF recipe that would show a gain over imitation: an SFT warm-up
//! (300 steps × 16) imitates a teacher that calls `get_time` on 70% of weather requests
//! ([`toy_biased_sft_dataset`]); the reward model starts from it and learns the true
//! [`toy_preferences`] of the training tasks ([`ToySplit::Train`]). Its held-out pairs are those
//! of [`ToySplit::HeldOut`] tasks (phrasings and operands never trained on), or with
//! `--request-split` those of training-pool requests kept out of every training task
//! ([`toy_request_split`]). Prints, per seed, the total held-out accuracy and the accuracy on
//! each [`ToyPairKind`] and request kind (weather / time / add): the total is mostly the easy
//! kinds, which a model ranks from the reply alone; the first two kinds need the request.

use std::sync::Arc;

use agent_rl::algos::reward_model::{RewardModelScorer, RewardTrainer};
use agent_rl::algos::toy::{
    ToyKind, ToyPairKind, ToySplit, call_only, toy_biased_sft_dataset, toy_expected_call,
    toy_model_config, toy_pair_outcomes, toy_preferences, toy_request_split, toy_split_tasks,
    toy_tokenizer, toy_warmup_config,
};
use agent_rl::algos::{LrSchedule, OptimizerConfig, RewardConfig};
use agent_rl::backend::CpuTrainBackend as B;
use agent_rl::core::Qwen2ForSequenceClassification;
use agent_rl::core::weights::random_model;
use burn::module::AutodiffModule;
use clap::Parser;

use agent_rl_experiments::sft;

/// Command-line options.
#[derive(Debug, Parser)]
#[command(about = "A reward model's held-out accuracy by kind of preference pair")]
struct Args {
    /// Seeds of the model, data, warm-up and reward model (every one is run and reported).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    seeds: Vec<u64>,
    /// Share of weather requests the teacher demonstrates with `get_time`.
    #[arg(long, default_value_t = 0.7)]
    confusion: f32,
    /// Reward-model steps (16 pairs each).
    #[arg(long, default_value_t = 400)]
    rm_steps: usize,
    /// Reward-model peak learning rate (cosine decay after 10 warm-up steps).
    #[arg(long, default_value_t = 3e-4)]
    rm_lr: f64,
    /// Held-out tasks (four pairs each).
    #[arg(long, default_value_t = 60)]
    held_out: usize,
    /// Held-out pairs from training-pool requests kept out of training, not unseen phrasings.
    #[arg(long)]
    request_split: bool,
}

#[allow(clippy::print_stdout)]
fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let tokenizer = Arc::new(toy_tokenizer()?);
    for &seed in &args.seeds {
        let drawn = call_only(toy_split_tasks(ToySplit::Train, 4000, seed));
        let (train, held_out) = if args.request_split {
            let extra = call_only(toy_split_tasks(
                ToySplit::Train,
                8 * args.held_out,
                seed + 2000,
            ));
            let mut held = toy_request_split(extra).held_out;
            held.truncate(args.held_out);
            (toy_request_split(drawn).train, held)
        } else {
            let held = call_only(toy_split_tasks(
                ToySplit::HeldOut,
                args.held_out,
                seed + 1000,
            ));
            (drawn, held)
        };
        let model = random_model::<B>(&toy_model_config(), seed, 0.05, &Default::default())?;
        let rows = toy_biased_sft_dataset(&train, args.confusion, seed);
        let warm = sft(model, &tokenizer, toy_warmup_config(300, 16, seed), &rows)?;
        let config = RewardConfig {
            max_steps: Some(args.rm_steps),
            batch_size: 16,
            seed,
            optimizer: OptimizerConfig {
                learning_rate: args.rm_lr,
                lr_scheduler_type: LrSchedule::Cosine,
                warmup_steps: 10,
                ..OptimizerConfig::default()
            },
            ..RewardConfig::default()
        };
        let eval = toy_preferences(&held_out, seed + 1000);
        let reward_model =
            Qwen2ForSequenceClassification::from_policy(warm, tokenizer.pad_id, seed);
        let mut trainer = RewardTrainer::builder(reward_model, Arc::clone(&tokenizer))
            .with_config(config)
            .build()?;
        trainer.train(&toy_preferences(&train, seed))?;
        let scorer = RewardModelScorer::new(trainer.into_model().valid(), Arc::clone(&tokenizer))?;
        // right / pairs by pair kind (rows) and request kind (weather, time, add).
        let mut cells = [[(0usize, 0usize); 3]; ToyPairKind::ALL.len()];
        let outcomes = toy_pair_outcomes(&scorer, &eval)?;
        for (index, &(kind, right)) in outcomes.iter().enumerate() {
            let request = toy_expected_call(&held_out[index / 4])
                .and_then(|call| ToyKind::of_tool(&call.name))
                .unwrap_or(ToyKind::Add);
            let cell = &mut cells[kind as usize][request as usize];
            cell.0 += usize::from(right);
            cell.1 += 1;
        }
        // The trainer's `accuracy` metric: ties count as wrong, as in `toy_pair_outcomes`.
        let right = outcomes.iter().filter(|(_, right)| *right).count();
        let total = right as f32 / outcomes.len().max(1) as f32;
        let mut line = format!("seed {seed}: held-out accuracy {total:.3}");
        for kind in ToyPairKind::ALL {
            let [w, t, a] = cells[kind as usize];
            line += &format!(
                " | {} weather {}/{} time {}/{} add {}/{}",
                kind.name(),
                w.0,
                w.1,
                t.0,
                t.1,
                a.0,
                a.1
            );
        }
        println!("{line}");
    }
    Ok(())
}
