//! [`BfclEvaluator`]: BFCL as the held-out evaluation of a training
//! [`Pipeline`](agent_rl_algos::pipeline::Pipeline) — the held-out entries answered by the model
//! being trained and judged by the BFCL checker, reported as tool-use scores.

use std::collections::HashSet;
use std::sync::Arc;

use agent_rl_algos::pipeline::Evaluator;
use agent_rl_algos::{AlgoError, ToolUseScores};
use agent_rl_core::{BurnPolicy, ChatTokenizer, Qwen2ForCausalLm, Task};
use burn::tensor::backend::Backend;

use super::data::{BfclDataset, BfclVersion};
use super::report::BfclReport;
use super::runner::{BfclRunConfig, BfclRunner};

/// Scores a model on a set of BFCL entries with [`BfclRunner`].
#[derive(Debug, Clone)]
pub struct BfclEvaluator {
    dataset: BfclDataset,
    version: BfclVersion,
    config: BfclRunConfig,
    last_report: Option<BfclReport>,
}

impl BfclEvaluator {
    /// Evaluates on every entry of `dataset`.
    pub fn new(dataset: BfclDataset, version: BfclVersion, config: BfclRunConfig) -> Self {
        Self {
            dataset,
            version,
            config,
            last_report: None,
        }
    }

    /// Evaluates on the entries of `dataset` whose ids are the ids of `tasks` (a held-out split
    /// made by [`split_train_held_out`](super::split_train_held_out)).
    pub fn for_tasks(
        dataset: &BfclDataset,
        tasks: &[Task],
        version: BfclVersion,
        config: BfclRunConfig,
    ) -> Self {
        let ids: HashSet<&str> = tasks.iter().map(|task| task.id.as_str()).collect();
        let mut subset = dataset.clone();
        for entries in subset.categories.values_mut() {
            entries.retain(|entry| ids.contains(entry.id.as_str()));
        }
        subset.categories.retain(|_, entries| !entries.is_empty());
        Self::new(subset, version, config)
    }

    /// The full BFCL report of the last evaluation.
    pub fn last_report(&self) -> Option<&BfclReport> {
        self.last_report.as_ref()
    }

    /// Entries evaluated.
    pub fn entries(&self) -> usize {
        self.dataset.categories.values().map(Vec::len).sum()
    }
}

impl<B: Backend> Evaluator<B> for BfclEvaluator {
    fn evaluate(
        &mut self,
        model: &Qwen2ForCausalLm<B>,
        tokenizer: &Arc<ChatTokenizer>,
    ) -> Result<ToolUseScores, AlgoError> {
        let mut policy = BurnPolicy::new(model.clone(), Arc::clone(tokenizer));
        let run = BfclRunner::new(&self.dataset, self.version, self.config.clone())
            .run(&mut policy)
            .map_err(|err| AlgoError::Evaluator {
                name: "bfcl".into(),
                source: Box::new(err),
            })?;
        let report = run.report;
        let scores = ToolUseScores {
            format_accuracy: report.format_accuracy as f32,
            argument_match: report.argument_match_rate as f32,
            success_rate: report.end_to_end_success as f32,
            episodes: run.verdicts.len(),
        };
        self.last_report = Some(report);
        Ok(scores)
    }
}
