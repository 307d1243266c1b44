//! The HTTP routes: `/v1/models`, `/v1/chat/completions`, `/v1/completions`, vLLM's adapter
//! routes, SGLang's `/update_weights_from_disk`, `/metrics`, `/health`. Every failure is an
//! OpenAI-shaped JSON error with a 4xx/5xx status; every route sits behind the cross-origin
//! guard, and bodies are read within a size limit and a deadline.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use agent_rl_core::{ChatTokenizer, ToolCallParser};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio::sync::oneshot;

use super::admission::Ticket;
use super::auth::ApiKey;
use super::completions::{chat, completions};
use super::cross_origin::{CrossOriginPolicy, guard};
use super::engine::{Command, Engine, Job, JobEvent};
use super::error::ApiError;
use super::plan::ModelLimits;
use super::wire::{LoadLoraRequest, UnloadLoraRequest, UpdateWeightsRequest};
use agent_rl_core::generation::{Generation, GenerationRow};

/// Shared state of the handlers.
pub(crate) struct AppState {
    pub engine: Engine,
    pub tokenizer: Arc<ChatTokenizer>,
    pub parser: Arc<dyn ToolCallParser>,
    pub limits: ModelLimits,
    pub model_name: String,
    pub tool_call_prefix: String,
    pub max_request_bytes: usize,
    /// How long a request's body may take to arrive.
    pub body_read_timeout: Duration,
    pub api_key: Option<ApiKey>,
    pub created: u64,
    /// `/v1/load_lora_adapter` and `/v1/unload_lora_adapter` are allowed.
    pub allow_runtime_lora: bool,
    /// `/update_weights_from_disk` is allowed.
    pub allow_weight_updates: bool,
    /// Names of the loaded adapters.
    pub adapters: RwLock<BTreeSet<String>>,
}

/// The router over `state`, behind the cross-origin `policy`.
pub(crate) fn router(state: Arc<AppState>, policy: Arc<CrossOriginPolicy>) -> Router {
    let limit = state.max_request_bytes;
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(chat))
        .route("/v1/completions", post(completions))
        .route("/v1/load_lora_adapter", post(load_lora))
        .route("/v1/unload_lora_adapter", post(unload_lora))
        .route("/update_weights_from_disk", post(update_weights))
        .route("/metrics", get(metrics))
        .route("/health", get(|| async { StatusCode::OK }))
        .fallback(|| async {
            ApiError {
                status: StatusCode::NOT_FOUND,
                message: "no such endpoint".into(),
                kind: "invalid_request_error",
                param: None,
                code: Some("not_found"),
            }
        })
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state)
        .layer(middleware::from_fn_with_state(policy, guard))
}

impl AppState {
    pub fn authorize(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        self.api_key
            .as_ref()
            .map_or(Ok(()), |key| key.check(headers))
    }

    /// The request's body, read within the size limit and the body read timeout.
    ///
    /// # Errors
    /// 408 when it does not arrive in time, 413 when it is too large, 400 when reading fails.
    pub async fn read_body(&self, request: Request) -> Result<Bytes, ApiError> {
        match tokio::time::timeout(self.body_read_timeout, Bytes::from_request(request, &())).await
        {
            Err(_) => Err(ApiError::request_timeout(
                self.body_read_timeout.as_millis() as u64,
            )),
            Ok(Err(rejection)) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Err(ApiError::too_large(self.max_request_bytes))
            }
            Ok(Err(rejection)) => Err(ApiError::bad_json(rejection.body_text())),
            Ok(Ok(bytes)) => Ok(bytes),
        }
    }

    /// `body` as the JSON an endpoint expects.
    ///
    /// # Errors
    /// 400 naming what does not parse.
    pub fn parse<T: DeserializeOwned>(&self, body: &[u8]) -> Result<T, ApiError> {
        serde_json::from_slice(body)
            .map_err(|err| ApiError::bad_json(format!("invalid request body: {err}")))
    }

    /// [`AppState::read_body`] then [`AppState::parse`].
    async fn read_json<T: DeserializeOwned>(&self, request: Request) -> Result<T, ApiError> {
        let body = self.read_body(request).await?;
        self.parse(&body)
    }

    /// The adapter a `model` name selects (`None`: the base model).
    pub fn check_model(&self, name: &str) -> Result<Option<String>, ApiError> {
        if name == self.model_name {
            return Ok(None);
        }
        let known = self.adapters.read().is_ok_and(|names| names.contains(name));
        if known {
            Ok(Some(name.to_owned()))
        } else {
            Err(ApiError::unknown_model(name))
        }
    }

    /// Queues the rows of an admitted request for the worker.
    pub fn submit(
        &self,
        ticket: Ticket,
        adapter: Option<String>,
        rows: Vec<GenerationRow>,
        stops: Vec<String>,
        stream: bool,
    ) -> Result<UnboundedReceiver<JobEvent>, ApiError> {
        let (events, receiver) = unbounded_channel();
        self.engine.submit(Job {
            adapter,
            rows,
            stops,
            stream_tokens: stream,
            events,
            ticket,
        })?;
        Ok(receiver)
    }

    /// Sends the worker the command `make` builds around a reply channel and waits for the
    /// reply.
    async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> Command,
    ) -> Result<T, ApiError> {
        let (reply, answer) = oneshot::channel();
        self.engine.command(make(reply))?;
        answer
            .await
            .map_err(|_| ApiError::internal("the generation worker stopped"))
    }

    fn check_lora_allowed(&self) -> Result<(), ApiError> {
        forbidden_unless(
            self.allow_runtime_lora,
            "loading adapters at run time is off (start the server with --allow-runtime-lora)",
            "lora_loading_disabled",
        )
    }

    fn check_weight_updates_allowed(&self) -> Result<(), ApiError> {
        forbidden_unless(
            self.allow_weight_updates,
            "replacing the weights at run time is off (start the server with \
             --allow-weight-updates)",
            "weight_updates_disabled",
        )
    }
}

/// 403 with `message` and `code` unless `allowed`.
fn forbidden_unless(allowed: bool, message: &str, code: &'static str) -> Result<(), ApiError> {
    if allowed {
        return Ok(());
    }
    Err(ApiError {
        status: StatusCode::FORBIDDEN,
        message: message.into(),
        kind: "invalid_request_error",
        param: None,
        code: Some(code),
    })
}

/// Waits for the job's generations.
pub(crate) async fn wait(
    mut events: UnboundedReceiver<JobEvent>,
) -> Result<Vec<Generation>, ApiError> {
    while let Some(event) = events.recv().await {
        if let JobEvent::Done(result) = event {
            return result.map_err(ApiError::internal);
        }
    }
    Err(ApiError::internal("the generation worker stopped"))
}

async fn models(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    state.authorize(&headers).map(|()| {
        let mut data = vec![json!({
            "id": state.model_name, "object": "model", "created": state.created,
            "owned_by": "agent-rl", "root": state.model_name, "parent": null,
            "max_model_len": state.limits.max_positions,
        })];
        if let Ok(names) = state.adapters.read() {
            data.extend(names.iter().map(|name| json!({
                "id": name, "object": "model", "created": state.created, "owned_by": "agent-rl",
                "root": name, "parent": state.model_name, "max_model_len": state.limits.max_positions,
            })));
        }
        axum::Json(json!({"object": "list", "data": data})).into_response()
    })
}

/// vLLM's `POST /v1/load_lora_adapter {"lora_name", "lora_path"}`: a PEFT adapter directory
/// on the server's disk, served under `lora_name`; loading a name again replaces it (so a
/// trainer can publish each step's adapter under one name).
async fn load_lora(
    State(state): State<Arc<AppState>>,
    http: Request,
) -> Result<Response, ApiError> {
    state.authorize(http.headers())?;
    state.check_lora_allowed()?;
    let request: LoadLoraRequest = state.read_json(http).await?;
    if request.lora_name.is_empty() || request.lora_name == state.model_name {
        return Err(ApiError::invalid(
            "lora_name",
            "lora_name must be non-empty and differ from the base model's name",
        ));
    }
    let loaded = state
        .ask(|reply| Command::LoadAdapter {
            name: request.lora_name.clone(),
            path: PathBuf::from(&request.lora_path),
            reply,
        })
        .await?;
    match loaded {
        Ok(()) => {
            if let Ok(mut names) = state.adapters.write() {
                names.insert(request.lora_name.clone());
            }
            Ok(format!(
                "Success: LoRA adapter '{}' added successfully.",
                request.lora_name
            )
            .into_response())
        }
        Err(message) => Err(ApiError::invalid(
            "lora_path",
            format!("cannot load the adapter: {message}"),
        )),
    }
}

/// SGLang's `POST /update_weights_from_disk {"model_path"}`: the served base weights are
/// replaced by the checkpoint (same architecture) between generation batches, and loaded
/// adapters are re-read onto them; answers SGLang's `{"success": true, "message"}`.
async fn update_weights(
    State(state): State<Arc<AppState>>,
    http: Request,
) -> Result<Response, ApiError> {
    state.authorize(http.headers())?;
    state.check_weight_updates_allowed()?;
    let request: UpdateWeightsRequest = state.read_json(http).await?;
    if let Some(format) = request.load_format.as_deref()
        && !matches!(format, "auto" | "safetensors")
    {
        return Err(ApiError::invalid(
            "load_format",
            format!("load_format `{format}` is not supported (auto or safetensors)"),
        ));
    }
    let loaded = state
        .ask(|reply| Command::LoadWeights {
            path: PathBuf::from(&request.model_path),
            reply,
        })
        .await?;
    match loaded {
        Ok(message) => Ok(axum::Json(json!({"success": true, "message": message})).into_response()),
        Err(message) => Err(ApiError::invalid(
            "model_path",
            format!("cannot load the weights: {message}"),
        )),
    }
}

/// vLLM's `POST /v1/unload_lora_adapter {"lora_name"}`.
async fn unload_lora(
    State(state): State<Arc<AppState>>,
    http: Request,
) -> Result<Response, ApiError> {
    state.authorize(http.headers())?;
    state.check_lora_allowed()?;
    let request: UnloadLoraRequest = state.read_json(http).await?;
    if let Ok(mut names) = state.adapters.write() {
        names.remove(&request.lora_name);
    }
    let removed = state
        .ask(|reply| Command::UnloadAdapter {
            name: request.lora_name.clone(),
            reply,
        })
        .await?;
    if removed {
        Ok(format!(
            "Success: LoRA adapter '{}' removed successfully.",
            request.lora_name
        )
        .into_response())
    } else {
        Err(ApiError {
            param: Some("lora_name".into()),
            ..ApiError::unknown_model(&request.lora_name)
        })
    }
}

async fn metrics(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    state
        .authorize(&headers)
        .map(|()| state.engine.metrics.prometheus().into_response())
}
