//! The tokenizer of the training benchmarks.

use agent_rl::algos::toy::toy_tokenizer;
use agent_rl::core::{ChatTemplate, ChatTokenizer, CoreError};

/// A template that renders the messages' text as is, so that a prompt has exactly the tokens its
/// text has (and TRL, given the same template, sees the same ids).
const PLAIN_TEMPLATE: &str = "{% for message in messages %}{{ message['content'] }}{% endfor %}";

/// The demo tokenizer (384 ids) with the plain template above instead of its chat template.
///
/// # Errors
/// When the embedded tokenizer or the template does not load.
pub fn plain_toy_tokenizer() -> Result<ChatTokenizer, CoreError> {
    let fixture = toy_tokenizer()?;
    Ok(ChatTokenizer::new(
        fixture.inner().clone(),
        Some(ChatTemplate::new(PLAIN_TEMPLATE, "plain_template")?),
        fixture.eos_ids.clone(),
        fixture.pad_id,
    ))
}
