//! `POST /v1/chat/completions` and `POST /v1/completions`.
//!
//! A request is admitted into the bounded queue first, its body read within the deadline, then
//! parsed, validated and tokenized on a blocking thread (a prompt of megabytes must not stall
//! the HTTP threads), and only then queued for the generation worker. When the client goes
//! away the handler (or the stream) is dropped, which closes the job's event channel: the
//! worker sees it and stops the job's rows at the next decode step.

use std::sync::Arc;

use agent_rl_core::generation::GenerationRow;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::bounded_encode::check_within;
use super::error::ApiError;
use super::plan::{
    MAX_TOP_LOGPROBS, SamplingPlan, ToolChoice, chat_prompt, core_messages, text_prompt,
};
use super::response::{
    chat_logprobs, chat_message, completion_logprobs, final_text, fresh_id, unix_now, usage,
};
use super::routes::{AppState, wait};
use super::stream::{StreamKind, StreamPlan, sse_response};
use super::wire::{ChatCompletionRequest, CompletionRequest, PromptField};

/// Runs `work` on the blocking pool, off the HTTP threads.
async fn off_thread<T: Send + 'static>(
    state: &Arc<AppState>,
    work: impl FnOnce(&AppState) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let state = Arc::clone(state);
    tokio::task::spawn_blocking(move || work(&state))
        .await
        .map_err(|_| ApiError::internal("preparing the request failed"))?
}

/// A chat request, validated and tokenized.
struct ChatJob {
    request: ChatCompletionRequest,
    adapter: Option<String>,
    plan: SamplingPlan,
    prefill: String,
    prompt: Vec<u32>,
    rows: Vec<GenerationRow>,
    parse_tools: bool,
}

impl ChatJob {
    fn prepare(state: &AppState, body: &[u8]) -> Result<Self, ApiError> {
        let request: ChatCompletionRequest = state.parse(body)?;
        let adapter = state.check_model(&request.sampling.model)?;
        let plan = SamplingPlan::from_fields(&request.sampling, &state.limits)?;
        let top_logprobs = match request.top_logprobs {
            Some(_) if !request.logprobs => {
                return Err(ApiError::invalid(
                    "top_logprobs",
                    "top_logprobs needs `logprobs: true`",
                ));
            }
            Some(k) if k > MAX_TOP_LOGPROBS => {
                return Err(ApiError::invalid(
                    "top_logprobs",
                    format!("top_logprobs must be in 0..={MAX_TOP_LOGPROBS}"),
                ));
            }
            Some(k) => k,
            None => 0,
        };
        let contents: Vec<&str> = request
            .messages
            .iter()
            .flat_map(|message| match &message.content {
                Value::String(text) => vec![text.as_str()],
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|part| part.get("text").and_then(Value::as_str))
                    .collect(),
                _ => Vec::new(),
            })
            .collect();
        // Before the template copies them several times over.
        check_within(
            &state.tokenizer,
            &contents,
            state.limits.max_positions,
            "messages",
        )?;
        let tools = request.tools.clone().unwrap_or_default();
        let choice = ToolChoice::parse(request.tool_choice.as_ref(), &tools)?;
        let messages = core_messages(&request.messages)?;
        let prefill = choice.prefill(&state.tool_call_prefix);
        let prompt = chat_prompt(&state.tokenizer, &messages, &tools, &prefill, &state.limits)?;
        let rows = plan.rows(&prompt, top_logprobs, &state.limits, "messages")?;
        Ok(Self {
            adapter,
            plan,
            prefill,
            prompt,
            rows,
            parse_tools: !tools.is_empty() && choice != ToolChoice::None,
            request,
        })
    }
}

pub(crate) async fn chat(
    State(state): State<Arc<AppState>>,
    http: Request,
) -> Result<Response, ApiError> {
    state.authorize(http.headers())?;
    let ticket = state.engine.admit()?;
    let body = state.read_body(http).await?;
    let job = off_thread(&state, move |state| ChatJob::prepare(state, &body)).await?;
    let ChatJob {
        request,
        adapter,
        plan,
        prefill,
        prompt,
        rows,
        parse_tools,
    } = job;
    let events = state.submit(ticket, adapter, rows, plan.stops.clone(), plan.stream)?;
    let id = fresh_id("chatcmpl-");
    let created = unix_now();
    if plan.stream {
        let stream = StreamPlan {
            kind: StreamKind::Chat {
                parse_tools,
                prefill,
            },
            id,
            created,
            model: request.sampling.model.clone(),
            stops: plan.stops,
            logprobs: request.logprobs,
            include_usage: plan.include_usage,
            prompt_tokens: prompt.len(),
            choice_index: (0..plan.n).collect(),
        };
        return Ok(sse_response(state, stream, events));
    }
    let generations = wait(events).await?;
    let mut choices = Vec::new();
    for (index, generation) in generations.iter().enumerate() {
        let (text, mut reason) = final_text(&state.tokenizer, generation, &plan.stops);
        let (message, calls) = chat_message(
            &format!("{prefill}{text}"),
            state.parser.as_ref(),
            parse_tools,
        );
        if calls && reason == "stop" {
            reason = "tool_calls";
        }
        let logprobs = if request.logprobs {
            chat_logprobs(&state.tokenizer, generation)
        } else {
            Value::Null
        };
        choices.push(
            json!({"index": index, "message": message, "logprobs": logprobs,
            "finish_reason": reason, "token_ids": generation.token_ids}),
        );
    }
    let completion_tokens = generations.iter().map(|g| g.token_ids.len()).sum();
    Ok(axum::Json(json!({
        "id": id, "object": "chat.completion", "created": created, "model": request.sampling.model,
        "choices": choices, "usage": usage(prompt.len(), completion_tokens),
        "prompt_token_ids": prompt,
    }))
    .into_response())
}

/// A text-completion request, validated and tokenized.
struct CompletionJob {
    request: CompletionRequest,
    adapter: Option<String>,
    plan: SamplingPlan,
    prompts: Vec<Vec<u32>>,
    rows: Vec<GenerationRow>,
}

impl CompletionJob {
    fn prepare(state: &AppState, body: &[u8]) -> Result<Self, ApiError> {
        let request: CompletionRequest = state.parse(body)?;
        let adapter = state.check_model(&request.sampling.model)?;
        if request.echo {
            return Err(ApiError::invalid(
                "echo",
                "echo is not supported by this server",
            ));
        }
        if request.best_of.is_some_and(|b| b != 1) {
            return Err(ApiError::invalid(
                "best_of",
                "best_of is not supported by this server (send 1 or omit it)",
            ));
        }
        let top_logprobs = request.logprobs.unwrap_or(0);
        if top_logprobs > MAX_TOP_LOGPROBS {
            return Err(ApiError::invalid(
                "logprobs",
                format!("logprobs must be in 0..={MAX_TOP_LOGPROBS}"),
            ));
        }
        let plan = SamplingPlan::from_fields(&request.sampling, &state.limits)?;
        let most_prompts = state.limits.max_n.max(1) * 4;
        let count = match &request.prompt {
            PromptField::Text(_) | PromptField::Ids(_) => 1,
            PromptField::Texts(texts) => texts.len(),
            PromptField::IdLists(lists) => lists.len(),
        };
        if count == 0 || count * plan.n > most_prompts {
            return Err(ApiError::invalid(
                "prompt",
                "give between 1 and a few prompts (at most 4 × max_n sequences)",
            ));
        }
        let encode =
            |text: &str, param: String| text_prompt(&state.tokenizer, text, &state.limits, &param);
        let prompts: Vec<Vec<u32>> = match &request.prompt {
            PromptField::Text(text) => vec![encode(text, "prompt".into())?],
            PromptField::Texts(texts) => texts
                .iter()
                .enumerate()
                .map(|(index, text)| encode(text, format!("prompt[{index}]")))
                .collect::<Result<_, _>>()?,
            PromptField::Ids(ids) => vec![ids.clone()],
            PromptField::IdLists(lists) => lists.clone(),
        };
        let mut rows = Vec::new();
        for (index, prompt) in prompts.iter().enumerate() {
            rows.extend(plan.rows(
                prompt,
                top_logprobs,
                &state.limits,
                &format!("prompt[{index}]"),
            )?);
        }
        Ok(Self {
            request,
            adapter,
            plan,
            prompts,
            rows,
        })
    }
}

pub(crate) async fn completions(
    State(state): State<Arc<AppState>>,
    http: Request,
) -> Result<Response, ApiError> {
    state.authorize(http.headers())?;
    let ticket = state.engine.admit()?;
    let body = state.read_body(http).await?;
    let job = off_thread(&state, move |state| CompletionJob::prepare(state, &body)).await?;
    let CompletionJob {
        request,
        adapter,
        plan,
        prompts,
        rows,
    } = job;
    let events = state.submit(ticket, adapter, rows, plan.stops.clone(), plan.stream)?;
    let id = fresh_id("cmpl-");
    let created = unix_now();
    let prompt_tokens: usize = prompts.iter().map(Vec::len).sum();
    if plan.stream {
        let stream = StreamPlan {
            kind: StreamKind::Completion,
            id,
            created,
            model: request.sampling.model.clone(),
            stops: plan.stops,
            logprobs: request.logprobs.is_some(),
            include_usage: plan.include_usage,
            prompt_tokens,
            choice_index: (0..prompts.len() * plan.n).collect(),
        };
        return Ok(sse_response(state, stream, events));
    }
    let generations = wait(events).await?;
    let choices: Vec<Value> = generations
        .iter()
        .enumerate()
        .map(|(index, generation)| {
            let (text, reason) = final_text(&state.tokenizer, generation, &plan.stops);
            let logprobs = if request.logprobs.is_some() {
                completion_logprobs(&state.tokenizer, generation)
            } else {
                Value::Null
            };
            json!({"index": index, "text": text, "logprobs": logprobs, "finish_reason": reason,
                   "token_ids": generation.token_ids, "prompt_token_ids": prompts[index / plan.n]})
        })
        .collect();
    let completion_tokens = generations.iter().map(|g| g.token_ids.len()).sum();
    Ok(axum::Json(json!({
        "id": id, "object": "text_completion", "created": created, "model": request.sampling.model,
        "choices": choices, "usage": usage(prompt_tokens, completion_tokens),
    }))
    .into_response())
}
