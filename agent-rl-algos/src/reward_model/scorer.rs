//! [`RewardModelScorer`]: a trained reward model as a batched
//! [`agent_rl_rewards::SequenceScorer`], so that
//! `LearnedReward::new("rm", scorer)` sums with rule rewards in a GRPO or PPO reward stack.

use std::sync::{Arc, Mutex};

use agent_rl_core::{ChatTokenizer, Message, Qwen2ForSequenceClassification, ToolSpec, Trajectory};
use agent_rl_rewards::{RewardError, SequenceScorer};
use burn::prelude::*;

use crate::error::{AlgoError, Result};
use crate::reward_model::batch::right_pad;
use crate::reward_model::dataset::tokenize_messages;

/// The conversation of an episode as a reward model reads it: the prompt, then each assistant
/// turn followed by its observations. A turn is rendered as the agent loop records it (content
/// plus structured `tool_calls`, as preference data carries them); a turn with malformed tool
/// calls is rendered as its raw text, so the model sees what was generated.
pub fn trajectory_messages(trajectory: &Trajectory) -> Vec<Message> {
    let mut messages = trajectory.prompt.clone();
    for turn in &trajectory.turns {
        let parsed = &turn.parsed;
        messages.push(if !parsed.malformed.is_empty() {
            Message::assistant(turn.text.clone())
        } else if parsed.tool_calls.is_empty() {
            Message::assistant(parsed.content.clone())
        } else {
            let content = Some(parsed.content.clone()).filter(|c| !c.is_empty());
            Message::assistant_tool_calls(content, parsed.tool_calls.clone())
        });
        messages.extend(turn.observations.iter().cloned());
    }
    messages
}

/// Scores conversations with a [`Qwen2ForSequenceClassification`]: each is rendered with the
/// chat template (no generation prompt), scored in right-padded batches of `batch_size`, and
/// read at its last token.
///
/// Give it an inference model (`model.valid()` of a trained one, or one loaded on a plain
/// backend). The model sits behind a mutex so the scorer is `Sync`; calls run one at a time.
///
/// ```
/// use agent_rl_algos::reward_model::RewardModelScorer;
/// use agent_rl_algos::toy::{toy_model_config, toy_tokenizer};
/// use agent_rl_core::weights::random_model;
/// use agent_rl_core::{Message, Qwen2ForSequenceClassification};
/// use burn::backend::Flex;
///
/// let policy = random_model::<Flex>(&toy_model_config(), 0, 0.05, &Default::default())?;
/// let rm = Qwen2ForSequenceClassification::from_policy(policy, None, 0);
/// let scorer = RewardModelScorer::new(rm, toy_tokenizer()?)?;
/// let score = scorer.score_conversation(&[Message::user("hi"), Message::assistant("hello")], &[])?;
/// assert!(score.is_finite());
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
pub struct RewardModelScorer<B: Backend> {
    model: Mutex<Qwen2ForSequenceClassification<B>>,
    tokenizer: Arc<ChatTokenizer>,
    pad_id: u32,
    batch_size: usize,
    name: String,
}

impl<B: Backend> std::fmt::Debug for RewardModelScorer<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RewardModelScorer")
            .field("name", &self.name)
            .field("batch_size", &self.batch_size)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> RewardModelScorer<B> {
    /// A scorer with batches of 16, named `rm` in errors.
    ///
    /// # Errors
    /// [`AlgoError::InvalidInput`] when the tokenizer has neither a pad nor an eos token, or a
    /// larger vocabulary than the model.
    pub fn new(
        model: Qwen2ForSequenceClassification<B>,
        tokenizer: impl Into<Arc<ChatTokenizer>>,
    ) -> Result<Self> {
        let tokenizer = tokenizer.into();
        let pad_id = tokenizer
            .pad_id
            .or_else(|| tokenizer.eos_ids.first().copied())
            .or(model.pad_token_id)
            .ok_or_else(|| {
                AlgoError::input("tokenizer", "has neither a pad token nor an eos token")
            })?;
        tokenizer.check_model_vocab(model.config().vocab_size)?;
        Ok(Self {
            model: Mutex::new(model),
            tokenizer,
            pad_id,
            batch_size: 16,
            name: "rm".into(),
        })
    }

    /// Sequences per forward pass (default 16; at least 1).
    #[must_use]
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// The name used in [`RewardError::Scorer`] messages (default `rm`).
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Scores of `conversations` (messages with the tools they were offered), in order.
    ///
    /// # Errors
    /// [`AlgoError::Core`] when a conversation cannot be rendered or tokenised;
    /// [`AlgoError::InvalidInput`] when one renders to no tokens or to ids outside the model's
    /// vocabulary.
    pub fn score_conversations(
        &self,
        conversations: &[(&[Message], &[ToolSpec])],
    ) -> Result<Vec<f32>> {
        let vocab = {
            let model = self
                .model
                .lock()
                .map_err(|_| AlgoError::input("scorer", "a previous call panicked"))?;
            model.config().vocab_size
        };
        let mut rows = Vec::with_capacity(conversations.len());
        for (index, (messages, tools)) in conversations.iter().enumerate() {
            let ids = tokenize_messages(&self.tokenizer, messages, tools)?;
            if ids.is_empty() || ids.iter().any(|&id| id as usize >= vocab) {
                return Err(AlgoError::input(
                    "conversation",
                    format!(
                        "#{index} renders to no tokens or to ids outside the vocabulary of {vocab}"
                    ),
                ));
            }
            rows.push(ids);
        }
        let model = self
            .model
            .lock()
            .map_err(|_| AlgoError::input("scorer", "a previous call panicked"))?;
        let mut scores = Vec::with_capacity(rows.len());
        for chunk in rows.chunks(self.batch_size) {
            let refs: Vec<&[u32]> = chunk.iter().map(Vec::as_slice).collect();
            let (ids, mask) = right_pad(&refs, self.pad_id);
            scores.extend(model.score_ids(&ids, Some(&mask)).into_data().iter::<f32>());
        }
        Ok(scores)
    }

    /// The score of one conversation.
    ///
    /// # Errors
    /// As [`Self::score_conversations`].
    pub fn score_conversation(&self, messages: &[Message], tools: &[ToolSpec]) -> Result<f32> {
        let scores = self.score_conversations(&[(messages, tools)])?;
        scores
            .first()
            .copied()
            .ok_or_else(|| AlgoError::input("conversation", "was not scored"))
    }
}

impl<B: Backend> SequenceScorer for RewardModelScorer<B>
where
    Qwen2ForSequenceClassification<B>: Send,
{
    /// # Errors
    /// [`RewardError::Scorer`] naming the scorer and what failed.
    fn score_sequences(&self, trajectories: &[&Trajectory]) -> agent_rl_rewards::Result<Vec<f32>> {
        let messages: Vec<Vec<Message>> = trajectories
            .iter()
            .map(|t| trajectory_messages(t))
            .collect();
        let conversations: Vec<(&[Message], &[ToolSpec])> = messages
            .iter()
            .zip(trajectories)
            .map(|(m, t)| (m.as_slice(), t.tools.as_slice()))
            .collect();
        self.score_conversations(&conversations)
            .map_err(|err| RewardError::Scorer {
                name: self.name.clone(),
                reason: err.to_string(),
            })
    }
}
