//! Checkpoints in Hugging Face layout: load (single file or sharded, f32/bf16/f16) and save.
//!
//! [`names`] is the one remap table between HF keys and this crate's fused modules.

mod build;
mod load;
pub mod names;
mod random;
mod reader;
mod save;
mod score_checkpoint;

pub use build::{TensorSource, build_model};
pub use load::{LoadOptions, LoadReport, load_pretrained};
pub use random::{RandomSource, random_model};
pub use reader::{CheckpointReader, StorageDtype};
pub use save::{SaveOptions, save_pretrained};
pub use score_checkpoint::SCORE_KEY;
