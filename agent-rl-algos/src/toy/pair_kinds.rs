//! The kinds of [`toy_preferences`](super::toy_preferences)' pairs, and a reward model's
//! accuracy on each: a total held-out accuracy is mostly the easy kinds (refusals, malformed
//! calls), so what a reward model learned of the request shows only kind by kind.

use burn::tensor::backend::Backend;

use crate::error::{AlgoError, Result};
use crate::reward_model::{PreferenceDataset, RewardModelScorer};
use crate::sft::TextOrMessages;

/// What a pair of [`toy_preferences`](super::toy_preferences) contrasts: the wrong call over
/// which the right one is preferred, or the refusal or malformed rendering ranked last. The hard kinds are the first
/// two (the reward model must read the request); the other three a reward model can rank from
/// the reply alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToyPairKind {
    /// The right call over the wrong tool with the right arguments.
    WrongTool,
    /// The right call over the right tool with one wrong argument value (the wrong tool when
    /// the task's pool has no other value of the type).
    WrongArguments,
    /// The right call over a refusal.
    RightOverRefusal,
    /// The wrong call over a refusal.
    WrongOverRefusal,
    /// The right call over a malformed rendering of itself.
    Malformed,
}

impl ToyPairKind {
    /// Every kind, in the order above.
    pub const ALL: [Self; 5] = [
        Self::WrongTool,
        Self::WrongArguments,
        Self::RightOverRefusal,
        Self::WrongOverRefusal,
        Self::Malformed,
    ];

    /// The kind of pair number `index` of [`toy_preferences`](super::toy_preferences) on tasks
    /// that all have an expected call (as [`toy_rlhf_tasks`](super::toy_rlhf_tasks) and
    /// [`call_only`](super::call_only) give).
    ///
    /// ```
    /// use agent_rl_algos::toy::ToyPairKind;
    /// assert_eq!(ToyPairKind::of_index(0), ToyPairKind::WrongTool);
    /// assert_eq!(ToyPairKind::of_index(4), ToyPairKind::WrongArguments);
    /// assert_eq!(ToyPairKind::of_index(7), ToyPairKind::Malformed);
    /// ```
    pub fn of_index(index: usize) -> Self {
        match index % 4 {
            0 if (index / 4).is_multiple_of(2) => Self::WrongTool,
            0 => Self::WrongArguments,
            1 => Self::RightOverRefusal,
            2 => Self::WrongOverRefusal,
            _ => Self::Malformed,
        }
    }

    /// A short snake-case name (`wrong_tool`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::WrongTool => "wrong_tool",
            Self::WrongArguments => "wrong_arguments",
            Self::RightOverRefusal => "right_over_refusal",
            Self::WrongOverRefusal => "wrong_over_refusal",
            Self::Malformed => "malformed",
        }
    }
}

/// Whether `scorer` ranks each pair of `pairs` right (the chosen side strictly higher), with
/// the pair's kind, in order. `pairs` must be [`toy_preferences`](super::toy_preferences) of
/// tasks that all have an expected call (the kind is read from the position,
/// [`ToyPairKind::of_index`]; pair `i` belongs to task `i / 4`).
///
/// # Errors
/// [`AlgoError::InvalidInput`] for a pair given as plain text rather than messages;
/// whatever [`RewardModelScorer::score_conversations`] fails on.
pub fn toy_pair_outcomes<B: Backend>(
    scorer: &RewardModelScorer<B>,
    pairs: &PreferenceDataset,
) -> Result<Vec<(ToyPairKind, bool)>> {
    let mut sides = Vec::with_capacity(2 * pairs.len());
    for (index, pair) in pairs.pairs().iter().enumerate() {
        for side in [&pair.chosen, &pair.rejected] {
            let TextOrMessages::Messages(messages) = side else {
                return Err(AlgoError::input(
                    "pairs",
                    format!("pair #{index} is plain text, not a toy conversation"),
                ));
            };
            sides.push((messages.as_slice(), pair.tools.as_slice()));
        }
    }
    let scores = scorer.score_conversations(&sides)?;
    Ok(scores
        .chunks(2)
        .enumerate()
        .map(|(index, pair)| (ToyPairKind::of_index(index), pair[0] > pair[1]))
        .collect())
}
