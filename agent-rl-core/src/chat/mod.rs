//! Tokenizer and chat templates, rendering byte-identically to transformers'
//! `apply_chat_template`.

mod python_json;
mod template;
mod template_bounds;
mod tokenizer;

pub use python_json::{python_float_repr, to_python_json, to_python_json_ascii};
pub use template::{ChatTemplate, DEFAULT_TEMPLATE_FUEL, DEFAULT_TEMPLATE_OUTPUT_BYTES};
pub use template_bounds::TEMPLATE_TOTAL_LIMIT_FACTOR;
pub use tokenizer::ChatTokenizer;
