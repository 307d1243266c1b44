//! [`Evaluator`]: what scores the model between the stages of a [`Pipeline`](super::Pipeline),
//! and [`ToolUseEvaluator`], the held-out tool-use evaluation (greedy episodes scored for
//! format, arguments and outcome). Benchmarks plug in their own (BFCL's lives in agent-rl-eval).

use std::sync::Arc;

use agent_rl_core::{
    AgentLoopConfig, ChatTokenizer, EnvironmentFactory, HermesToolCallParser, Qwen2ForCausalLm,
    SamplingConfig, Task, ToolCallParser,
};
use burn::tensor::backend::Backend;

use crate::error::Result;
use crate::evaluate::{ToolUseScores, evaluate_tool_use};

/// Scores a model (on the inference backend `B`) on held-out data.
pub trait Evaluator<B: Backend> {
    /// The scores of `model`.
    ///
    /// # Errors
    /// Whatever the evaluation fails on (rollouts, broken targets, benchmark files).
    fn evaluate(
        &mut self,
        model: &Qwen2ForCausalLm<B>,
        tokenizer: &Arc<ChatTokenizer>,
    ) -> Result<ToolUseScores>;
}

/// Held-out tool-use evaluation: one greedy episode per task (multi-turn when an environment is
/// given), scored by [`evaluate_tool_use`].
pub struct ToolUseEvaluator {
    tasks: Vec<Task>,
    environments: Option<Arc<dyn EnvironmentFactory>>,
    parser: Box<dyn ToolCallParser>,
    config: AgentLoopConfig,
}

impl std::fmt::Debug for ToolUseEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolUseEvaluator")
            .field("tasks", &self.tasks.len())
            .field("environments", &self.environments.is_some())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl ToolUseEvaluator {
    /// Evaluates on `tasks`, single-turn, with greedy decoding of at most `max_new_tokens`
    /// and the Hermes tool-call format.
    pub fn new(tasks: Vec<Task>, max_new_tokens: usize) -> Self {
        Self {
            tasks,
            environments: None,
            parser: Box::new(HermesToolCallParser::default()),
            config: AgentLoopConfig {
                sampling: SamplingConfig::greedy(max_new_tokens),
                ..AgentLoopConfig::default()
            },
        }
    }

    /// Runs multi-turn episodes in environments from `factory` (tool results fed back).
    #[must_use]
    pub fn with_environment(mut self, factory: Arc<dyn EnvironmentFactory>) -> Self {
        self.environments = Some(factory);
        self
    }

    /// Replaces the agent-loop settings (sampling, tool rounds, truncation, calls per turn).
    #[must_use]
    pub fn with_loop_config(mut self, config: AgentLoopConfig) -> Self {
        self.config = config;
        self
    }

    /// Parses tool calls with `parser` (default Hermes).
    #[must_use]
    pub fn with_parser(mut self, parser: impl ToolCallParser + 'static) -> Self {
        self.parser = Box::new(parser);
        self
    }

    /// The held-out tasks.
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }
}

impl<B: Backend> Evaluator<B> for ToolUseEvaluator {
    fn evaluate(
        &mut self,
        model: &Qwen2ForCausalLm<B>,
        tokenizer: &Arc<ChatTokenizer>,
    ) -> Result<ToolUseScores> {
        evaluate_tool_use(
            model,
            tokenizer,
            self.parser.as_ref(),
            &self.tasks,
            self.environments.as_deref(),
            self.config.clone(),
        )
    }
}
