//! Supervised fine-tuning: TRL-style datasets, assistant/completion loss masks found in the
//! rendered tokens, packing, and [`SftTrainer`].
//!
//! | file | concept |
//! |---|---|
//! | [`dataset`] | JSONL rows (`messages`/`tools`, `prompt`/`completion`) with file and line |
//! | [`masking`] | rendering + tokenising a row with its loss mask (prefix-stable templates) |
//! | [`packing`] | one or several examples per training sequence (best-fit decreasing) |
//! | [`batch`] | padding, block-diagonal causal attention, the forward pass |
//! | [`loss`] | next-token cross-entropy and token accuracy |
//! | [`trainer`], [`builder`] | the training loop and its builder |

pub mod batch;
pub mod builder;
pub mod dataset;
pub mod loss;
pub mod masking;
pub mod packing;
pub mod trainer;

pub use batch::SftBatch;
pub use builder::SftTrainerBuilder;
pub use dataset::{RowOrigin, SftDataset, SftExample, TextOrMessages};
pub use loss::{TokenLoss, token_loss, token_loss_from_logits};
pub use masking::{
    EncodedText, RenderedConversation, TokenizedExample, encode_with_offsets,
    render_with_assistant_spans, token_mask_from_spans, tokenize_conversation, tokenize_example,
};
pub use packing::{SftSequence, pack_examples, unpacked};
pub use trainer::{EvalResult, SftReport, SftTrainer};
