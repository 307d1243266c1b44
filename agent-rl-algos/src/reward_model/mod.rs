//! Reward models: preference data in TRL's layouts, the Bradley–Terry loss, [`RewardTrainer`],
//! and [`RewardModelScorer`], which plugs a trained model into the reward stack.
//!
//! | file | concept |
//! |---|---|
//! | [`dataset`] | JSONL preference rows (implicit / explicit prompt, ranked lists) with file and line |
//! | [`batch`] | tokenised pairs, length filter, one padded forward for chosen + rejected |
//! | [`loss`] | `−log σ(r_c − r_r − margin)` + centring, TRL's metrics |
//! | [`trainer`], [`builder`] | the training loop and its builder |
//! | [`scorer`] | a reward model as an `agent_rl_rewards::SequenceScorer` |

pub mod batch;
pub mod builder;
pub mod dataset;
pub mod loss;
pub mod scorer;
pub mod trainer;

pub use batch::{TokenizedPair, TokenizedPairs, pair_scores, right_pad, tokenize_pairs};
pub use builder::RewardTrainerBuilder;
pub use dataset::{PreferenceDataset, PreferencePair, tokenize_messages, tokenize_side};
pub use loss::{PreferenceMetrics, preference_loss};
pub use scorer::RewardModelScorer;
pub use trainer::{RewardEvalResult, RewardReport, RewardTrainer};
