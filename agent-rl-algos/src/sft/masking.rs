//! Loss masks found in the rendered token sequence: assistant turns of conversations,
//! completions of prompt/completion rows.
//!
//! The chat template is treated as a black box. For each assistant message `i` the conversation
//! is rendered three ways — `messages[..i]` with the generation prompt, `messages[..=i]` without
//! it, and the whole conversation — and each must be a prefix of the next; the assistant turn is
//! then the byte span between the first two (the generation prompt, e.g.
//! `<|im_start|>assistant\n`, is not part of it), cut after its last end-of-turn token so that
//! the separator newline some templates add is not trained. Byte spans become token masks through
//! the tokenizer's offsets: a token carries loss when it starts inside a span. Templates that
//! rewrite earlier turns when later ones are added (e.g. dropping reasoning) are not prefix-stable
//! and are rejected with [`AlgoError::TemplateNotPrefixStable`] instead of being masked wrongly.

use std::ops::Range;

use agent_rl_core::{ChatTokenizer, Message, Role, ToolSpec};

use crate::config::SftConfig;
use crate::error::{AlgoError, Result};
use crate::sft::dataset::{SftExample, TextOrMessages};

/// Token ids of one example and which of them the loss is computed on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TokenizedExample {
    /// The token ids.
    pub input_ids: Vec<u32>,
    /// `loss_mask[t]`: the loss includes predicting token `t` (from the tokens before it).
    pub loss_mask: Vec<bool>,
}

impl TokenizedExample {
    /// Number of tokens that carry loss (the first token never does: nothing predicts it).
    pub fn num_loss_tokens(&self) -> usize {
        self.loss_mask.iter().skip(1).filter(|&&m| m).count()
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.input_ids.len()
    }

    /// Whether there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.input_ids.is_empty()
    }

    /// Keeps the first `max_length` tokens (TRL's `truncation_mode="keep_start"`); returns
    /// whether anything was cut.
    pub fn truncate(&mut self, max_length: usize) -> bool {
        let cut = self.input_ids.len() > max_length;
        self.input_ids.truncate(max_length);
        self.loss_mask.truncate(max_length);
        cut
    }
}

/// Token ids with the byte span of the text each came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedText {
    /// The token ids (no special tokens added).
    pub ids: Vec<u32>,
    /// `(start, end)` byte offsets of each token in the text.
    pub offsets: Vec<(usize, usize)>,
}

/// Encodes `text` as chat templates are encoded (no special tokens added), keeping byte offsets.
///
/// # Errors
/// [`AlgoError::InvalidInput`] when the tokenizer fails.
pub fn encode_with_offsets(tokenizer: &ChatTokenizer, text: &str) -> Result<EncodedText> {
    let encoding = tokenizer
        .inner()
        .encode(text, false)
        .map_err(|err| AlgoError::input("tokenizer", format!("cannot encode text: {err}")))?;
    Ok(EncodedText {
        ids: encoding.get_ids().to_vec(),
        offsets: encoding.get_offsets().to_vec(),
    })
}

/// `mask[k]`: token `k` starts inside one of `spans` (byte ranges of the encoded text).
pub fn token_mask_from_spans(offsets: &[(usize, usize)], spans: &[Range<usize>]) -> Vec<bool> {
    offsets
        .iter()
        .map(|&(start, _)| spans.iter().any(|span| span.contains(&start)))
        .collect()
}

/// A conversation rendered by the chat template, with the byte span of each assistant turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedConversation {
    /// The whole conversation as the template renders it (no generation prompt).
    pub text: String,
    /// `(message index, byte span)` of each assistant turn: its content, tool calls and
    /// end-of-turn token, without the role header of the generation prompt.
    pub assistant_spans: Vec<(usize, Range<usize>)>,
}

/// The end-of-turn strings of `tokenizer` (its eos tokens as text).
pub(crate) fn eos_texts(tokenizer: &ChatTokenizer) -> Vec<String> {
    tokenizer
        .eos_ids
        .iter()
        .filter_map(|&id| tokenizer.inner().id_to_token(id))
        .filter(|text| !text.is_empty())
        .collect()
}

/// Length of a turn's text up to and including its last end-of-turn token; without one, up to
/// its last non-whitespace character.
fn turn_length(turn: &str, eos_texts: &[String]) -> usize {
    eos_texts
        .iter()
        .filter_map(|eos| turn.rfind(eos.as_str()).map(|at| at + eos.len()))
        .max()
        .unwrap_or_else(|| turn.trim_end().len())
}

/// Checks that `prefix` starts `full`; otherwise reports where they differ.
fn check_prefix(prefix: &str, full: &str, message: usize, what: &str) -> Result<()> {
    if full.starts_with(prefix) {
        return Ok(());
    }
    let at = prefix
        .char_indices()
        .zip(full.chars())
        .find(|((_, a), b)| a != b)
        .map_or(prefix.len().min(full.len()), |((index, _), _)| index);
    let snippet = |text: &str| -> String { text[at..].chars().take(40).collect() };
    Err(AlgoError::TemplateNotPrefixStable {
        message,
        reason: format!(
            "{what} renders {:?} at byte {at} where the full conversation has {:?}",
            snippet(prefix),
            snippet(full)
        ),
    })
}

/// Renders `messages` and finds the byte span of every assistant turn in the result.
///
/// # Errors
/// [`AlgoError::TemplateNotPrefixStable`] when a prefix of the conversation renders differently
/// from the start of the full rendering; [`AlgoError::Core`] when the template fails.
pub fn render_with_assistant_spans(
    tokenizer: &ChatTokenizer,
    messages: &[Message],
    tools: &[ToolSpec],
) -> Result<RenderedConversation> {
    let text = tokenizer.apply_chat_template(messages, tools, false)?;
    let eos = eos_texts(tokenizer);
    let mut assistant_spans = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        if message.role != Role::Assistant {
            continue;
        }
        let before = tokenizer.apply_chat_template(&messages[..index], tools, true)?;
        let through = tokenizer.apply_chat_template(&messages[..=index], tools, false)?;
        check_prefix(
            &before,
            &through,
            index,
            "the conversation before it with the generation prompt",
        )?;
        check_prefix(&through, &text, index, "the conversation up to it")?;
        let start = before.len();
        let end = start + turn_length(&through[start..], &eos);
        assistant_spans.push((index, start..end));
    }
    Ok(RenderedConversation {
        text,
        assistant_spans,
    })
}

fn tokenize_spans(
    tokenizer: &ChatTokenizer,
    text: &str,
    spans: Option<&[Range<usize>]>,
) -> Result<TokenizedExample> {
    let encoded = encode_with_offsets(tokenizer, text)?;
    let loss_mask = match spans {
        Some(spans) => token_mask_from_spans(&encoded.offsets, spans),
        None => vec![true; encoded.ids.len()],
    };
    Ok(TokenizedExample {
        input_ids: encoded.ids,
        loss_mask,
    })
}

/// Tokenises a conversation; with `assistant_only` the mask covers the assistant turns only
/// (content, tool calls, end-of-turn token), otherwise every token.
///
/// # Errors
/// As [`render_with_assistant_spans`] and [`encode_with_offsets`].
pub fn tokenize_conversation(
    tokenizer: &ChatTokenizer,
    messages: &[Message],
    tools: &[ToolSpec],
    assistant_only: bool,
) -> Result<TokenizedExample> {
    if !assistant_only {
        let text = tokenizer.apply_chat_template(messages, tools, false)?;
        return tokenize_spans(tokenizer, &text, None);
    }
    let rendered = render_with_assistant_spans(tokenizer, messages, tools)?;
    let spans: Vec<Range<usize>> = rendered
        .assistant_spans
        .into_iter()
        .map(|(_, span)| span)
        .collect();
    tokenize_spans(tokenizer, &rendered.text, Some(&spans))
}

fn tokenize_prompt_completion_messages(
    tokenizer: &ChatTokenizer,
    prompt: &[Message],
    completion: &[Message],
    tools: &[ToolSpec],
    config: &SftConfig,
) -> Result<TokenizedExample> {
    let messages: Vec<Message> = prompt.iter().chain(completion).cloned().collect();
    if config.assistant_only_loss {
        let rendered = render_with_assistant_spans(tokenizer, &messages, tools)?;
        let spans: Vec<Range<usize>> = rendered
            .assistant_spans
            .into_iter()
            .filter(|(index, _)| !config.completion_only_loss || *index >= prompt.len())
            .map(|(_, span)| span)
            .collect();
        return tokenize_spans(tokenizer, &rendered.text, Some(&spans));
    }
    let text = tokenizer.apply_chat_template(&messages, tools, false)?;
    if !config.completion_only_loss {
        return tokenize_spans(tokenizer, &text, None);
    }
    let before = tokenizer.apply_chat_template(prompt, tools, true)?;
    check_prefix(
        &before,
        &text,
        prompt.len(),
        "the prompt with the generation prompt",
    )?;
    let start = before.len();
    let end = start + turn_length(&text[start..], &eos_texts(tokenizer));
    tokenize_spans(tokenizer, &text, Some(std::slice::from_ref(&(start..end))))
}

/// Tokenises one row as the trainer sees it, with the loss mask the config asks for:
/// conversations through [`tokenize_conversation`]; text prompt/completion rows as
/// `prompt + completion + eos` (eos appended unless the completion ends with it), the mask on the
/// completion and eos with `completion_only_loss`; message prompt/completion rows rendered as one
/// conversation, the mask on the completion's turns. No truncation (see
/// [`TokenizedExample::truncate`]).
///
/// # Errors
/// As [`render_with_assistant_spans`] and [`encode_with_offsets`].
pub fn tokenize_example(
    tokenizer: &ChatTokenizer,
    example: &SftExample,
    config: &SftConfig,
) -> Result<TokenizedExample> {
    match example {
        SftExample::Conversation { messages, tools } => {
            tokenize_conversation(tokenizer, messages, tools, config.assistant_only_loss)
        }
        SftExample::PromptCompletion {
            prompt: TextOrMessages::Messages(prompt),
            completion: TextOrMessages::Messages(completion),
            tools,
        } => tokenize_prompt_completion_messages(tokenizer, prompt, completion, tools, config),
        SftExample::PromptCompletion {
            prompt, completion, ..
        } => {
            let (TextOrMessages::Text(prompt), TextOrMessages::Text(completion)) =
                (prompt, completion)
            else {
                return Err(AlgoError::input(
                    "example",
                    "prompt and completion must both be text or both be messages",
                ));
            };
            let text = format!("{prompt}{completion}");
            let completion_span = prompt.len()..text.len();
            let spans = std::slice::from_ref(&completion_span);
            let mut example = tokenize_spans(
                tokenizer,
                &text,
                config.completion_only_loss.then_some(spans),
            )?;
            let ends_with_eos = eos_texts(tokenizer)
                .iter()
                .any(|eos| completion.ends_with(eos.as_str()));
            if let (false, Some(&eos)) = (ends_with_eos, tokenizer.eos_ids.first()) {
                example.input_ids.push(eos);
                example.loss_mask.push(true);
            }
            Ok(example)
        }
    }
}
