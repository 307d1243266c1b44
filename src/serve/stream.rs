//! Server-sent events: chunks as tokens arrive, then the finish, the optional usage chunk and
//! `data: [DONE]`.
//!
//! Text is sent as soon as it is safe: a tail that could still become a stop string, or an
//! incomplete UTF-8 character, waits for the next token. When tool calls are parsed the text
//! is held to the end and sent with the calls in one delta (the calls are only known then).

use std::convert::Infallible;
use std::sync::Arc;

use agent_rl_core::generation::Generation;
use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::engine::JobEvent;
use super::response::{chat_logprobs, chat_message, completion_logprobs, final_text, usage};
use super::routes::AppState;

/// Which endpoint's chunk shape to write.
#[derive(Debug, Clone)]
pub(crate) enum StreamKind {
    /// `chat.completion.chunk`; parse tool calls at the end when `parse_tools`.
    Chat {
        /// Tool calls are parsed (text held to the end).
        parse_tools: bool,
        /// Text forced after the prompt (part of the message).
        prefill: String,
    },
    /// `text_completion` chunks.
    Completion,
}

/// Everything a stream needs besides the events.
pub(crate) struct StreamPlan {
    pub kind: StreamKind,
    pub id: String,
    pub created: u64,
    pub model: String,
    pub stops: Vec<String>,
    pub logprobs: bool,
    pub include_usage: bool,
    /// Prompt tokens, each prompt counted once (`usage.prompt_tokens`).
    pub prompt_tokens: usize,
    /// First choice index of each row (`prompt × n + i`).
    pub choice_index: Vec<usize>,
}

struct RowState {
    ids: Vec<u32>,
    unsent_ids: Vec<u32>,
    sent_text: String,
    frozen: bool,
}

/// Starts forwarding `events` as SSE and returns the streaming response.
pub(crate) fn sse_response(
    state: Arc<AppState>,
    plan: StreamPlan,
    events: UnboundedReceiver<JobEvent>,
) -> Response {
    let (sender, receiver) = unbounded_channel::<Bytes>();
    tokio::spawn(forward(state, plan, events, sender));
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver
            .recv()
            .await
            .map(|bytes| (Ok::<_, Infallible>(bytes), receiver))
    });
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-cache"),
    );
    response
}

fn event(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

impl StreamPlan {
    fn chunk(&self, choice: Value) -> Value {
        let object = match self.kind {
            StreamKind::Chat { .. } => "chat.completion.chunk",
            StreamKind::Completion => "text_completion",
        };
        json!({"id": self.id, "object": object, "created": self.created, "model": self.model,
               "choices": [choice]})
    }

    fn text_choice(&self, row: usize, text: &str, ids: &[u32]) -> Value {
        let index = self.choice_index[row];
        match self.kind {
            StreamKind::Chat { .. } => json!({"index": index, "delta": {"content": text},
                "logprobs": null, "finish_reason": null, "token_ids": ids}),
            StreamKind::Completion => json!({"index": index, "text": text, "logprobs": null,
                "finish_reason": null, "token_ids": ids}),
        }
    }

    /// Longest tail that could still turn into a stop string.
    fn holdback(&self) -> usize {
        self.stops
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(1)
            .saturating_sub(1)
    }
}

async fn forward(
    state: Arc<AppState>,
    plan: StreamPlan,
    mut events: UnboundedReceiver<JobEvent>,
    out: UnboundedSender<Bytes>,
) {
    let rows = plan.choice_index.len();
    let held = matches!(
        plan.kind,
        StreamKind::Chat {
            parse_tools: true,
            ..
        }
    );
    let mut states: Vec<RowState> = (0..rows)
        .map(|_| RowState {
            ids: Vec::new(),
            unsent_ids: Vec::new(),
            sent_text: String::new(),
            frozen: held,
        })
        .collect();
    if let StreamKind::Chat { .. } = plan.kind {
        for row in 0..rows {
            let choice = json!({"index": plan.choice_index[row],
                "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null});
            let _ = out.send(event(&plan.chunk(choice)));
        }
    }
    let holdback = plan.holdback();
    loop {
        // The body is dropped when the client goes away; returning then drops `events`,
        // which tells the worker to stop the job.
        let message = tokio::select! {
            message = events.recv() => message,
            () = out.closed() => return,
        };
        let Some(message) = message else { break };
        match message {
            JobEvent::Token { row, token } => {
                let Some(row_state) = states.get_mut(row) else {
                    continue;
                };
                row_state.ids.push(token);
                row_state.unsent_ids.push(token);
                if row_state.frozen {
                    continue;
                }
                let text = state
                    .tokenizer
                    .decode(&row_state.ids, true)
                    .unwrap_or_default();
                if !text.starts_with(&row_state.sent_text)
                    || plan.stops.iter().any(|s| text.contains(s.as_str()))
                {
                    row_state.frozen = true;
                    continue;
                }
                let mut end = text.len().saturating_sub(holdback);
                while end > 0 && !text.is_char_boundary(end) {
                    end -= 1;
                }
                let safe = text[..end].trim_end_matches('\u{FFFD}');
                if safe.len() > row_state.sent_text.len() {
                    let delta = &safe[row_state.sent_text.len()..];
                    let _ = out.send(event(&plan.chunk(plan.text_choice(
                        row,
                        delta,
                        &row_state.unsent_ids,
                    ))));
                    row_state.sent_text = safe.to_owned();
                    row_state.unsent_ids.clear();
                }
            }
            JobEvent::Done(Ok(generations)) => {
                finish(&state, &plan, &states, &generations, &out);
                break;
            }
            JobEvent::Done(Err(message)) => {
                let error = super::error::ApiError::internal(message).body();
                let _ = out.send(event(&error));
                break;
            }
        }
    }
    let _ = out.send(Bytes::from_static(b"data: [DONE]\n\n"));
}

/// The remaining text (or the whole message with its tool calls), the finish reason, usage.
fn finish(
    state: &AppState,
    plan: &StreamPlan,
    states: &[RowState],
    generations: &[Generation],
    out: &UnboundedSender<Bytes>,
) {
    let tokenizer = &state.tokenizer;
    for (row, generation) in generations.iter().enumerate() {
        let row_state = &states[row];
        let (text, mut reason) = final_text(tokenizer, generation, &plan.stops);
        let index = plan.choice_index[row];
        let mut choice = match &plan.kind {
            StreamKind::Chat {
                parse_tools: true,
                prefill,
            } => {
                let (message, calls) =
                    chat_message(&format!("{prefill}{text}"), state.parser.as_ref(), true);
                if calls && reason == "stop" {
                    reason = "tool_calls";
                }
                let mut delta = json!({"content": message["content"]});
                if let Some(list) = message.get("tool_calls").and_then(Value::as_array) {
                    let indexed: Vec<Value> = list
                        .iter()
                        .enumerate()
                        .map(|(i, call)| {
                            let mut call = call.clone();
                            call["index"] = json!(i);
                            call
                        })
                        .collect();
                    delta["tool_calls"] = Value::Array(indexed);
                }
                json!({"index": index, "delta": delta, "logprobs": null, "finish_reason": null})
            }
            kind => {
                let rest = text
                    .strip_prefix(row_state.sent_text.as_str())
                    .unwrap_or("");
                let mut choice = plan.text_choice(row, rest, &[]);
                if let StreamKind::Completion = kind {
                    choice["text"] = json!(rest);
                }
                choice
            }
        };
        choice["token_ids"] = json!(row_state.unsent_ids);
        if plan.logprobs {
            choice["logprobs"] = match plan.kind {
                StreamKind::Chat { .. } => chat_logprobs(tokenizer, generation),
                StreamKind::Completion => completion_logprobs(tokenizer, generation),
            };
        }
        let _ = out.send(event(&plan.chunk(choice)));
        let last = match plan.kind {
            StreamKind::Chat { .. } => {
                json!({"index": index, "delta": {}, "logprobs": null, "finish_reason": reason})
            }
            StreamKind::Completion => {
                json!({"index": index, "text": "", "logprobs": null, "finish_reason": reason})
            }
        };
        let _ = out.send(event(&plan.chunk(last)));
    }
    if plan.include_usage {
        let completion: usize = generations.iter().map(|g| g.token_ids.len()).sum();
        let mut chunk = plan.chunk(Value::Null);
        chunk["choices"] = json!([]);
        chunk["usage"] = usage(plan.prompt_tokens, completion);
        let _ = out.send(event(&chunk));
    }
}
