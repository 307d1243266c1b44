//! Starting the server: the generation worker, the async runtime, the listener.

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use agent_rl_core::{BurnPolicy, Qwen2ForCausalLm, ToolCallParser};
use burn::prelude::Backend;
use tokio::sync::oneshot;

use super::auth::ApiKey;
use super::config::ServeConfig;
use super::cross_origin::CrossOriginPolicy;
use super::engine::{BatchLimits, Engine};
use super::error::ServeError;
use super::listener::serve;
use super::metrics::{MetricsSnapshot, ServeMetrics};
use super::plan::ModelLimits;
use super::response::unix_now;
use super::routes::{AppState, router};

/// Threads that parse and tokenize requests at once.
const PREPARE_THREADS: usize = 4;

/// A running server. [`ServerHandle::wait`] blocks until it ends; dropping the handle stops it.
pub struct ServerHandle {
    address: SocketAddr,
    metrics: Arc<ServeMetrics>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<Result<(), std::io::Error>>>,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("address", &self.address)
            .finish()
    }
}

impl ServerHandle {
    /// The bound address (the real port when the config asked for 0).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `http://host:port/v1`, the base URL OpenAI clients take.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// The work counters so far.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.metrics.snapshot()
    }

    /// Blocks until the server stops.
    ///
    /// # Errors
    /// [`ServeError::Runtime`] when the server failed.
    pub fn wait(mut self) -> Result<(), ServeError> {
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result.map_err(ServeError::Runtime),
            Some(Err(_)) => Err(ServeError::Runtime(std::io::Error::other(
                "the server thread panicked",
            ))),
            None => Ok(()),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Serves `policy` (its model, tokenizer and tool-call parser) with OpenAI's API on
/// `config.host:config.port`, on background threads: one owns the model and decodes batches,
/// a small async runtime answers HTTP.
///
/// # Errors
/// [`ServeError::InvalidConfig`] for a bad setting, [`ServeError::Bind`] when the address
/// cannot be bound, [`ServeError::Runtime`] when threads cannot start.
pub fn start<B: Backend>(
    policy: BurnPolicy<B>,
    config: ServeConfig,
) -> Result<ServerHandle, ServeError>
where
    Qwen2ForCausalLm<B>: Send + 'static,
{
    config.validate()?;
    let BurnPolicy {
        model,
        tokenizer,
        parser,
    } = policy;
    let model_config = model.config().clone();
    let limits = ModelLimits {
        max_positions: model_config.max_position_embeddings,
        vocab_size: model_config.vocab_size,
        max_tokens_limit: config.max_tokens_limit,
        default_max_tokens: config.default_max_tokens,
        max_n: config.max_n,
    };
    let address = format!("{}:{}", config.host, config.port);
    let listener = std::net::TcpListener::bind(&address)
        .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
        .map_err(|source| ServeError::Bind {
            address: address.clone(),
            source,
        })?;
    let bound = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { address, source })?;
    let batch = BatchLimits {
        max_batch: config.max_batch,
        wait: Duration::from_millis(config.batch_wait_ms),
        max_positions: limits.max_positions,
    };
    let engine = Engine::spawn(
        model,
        Arc::clone(&tokenizer),
        batch,
        config.max_queued_requests,
    )?;
    let metrics = Arc::clone(&engine.metrics);
    let parser: Arc<dyn ToolCallParser> = Arc::from(parser);
    let state = Arc::new(AppState {
        engine,
        tokenizer,
        parser,
        limits,
        model_name: config.model_name.clone(),
        tool_call_prefix: config.tool_call_prefix.clone(),
        max_request_bytes: config.max_request_bytes,
        body_read_timeout: Duration::from_millis(config.body_read_timeout_ms),
        api_key: config.api_key.as_deref().map(ApiKey::new),
        created: unix_now(),
        allow_runtime_lora: config.allow_runtime_lora,
        allow_weight_updates: config.allow_weight_updates,
        adapters: std::sync::RwLock::default(),
    });
    let policy = Arc::new(CrossOriginPolicy::new(
        &config.allow_origins,
        &config.allow_hosts,
    ));
    let header_read_timeout = Duration::from_millis(config.header_read_timeout_ms);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // Requests are parsed and tokenized on the blocking pool: a few threads, not one per
        // request (each thread's stack and allocator heap stay resident while it lives).
        .max_blocking_threads(PREPARE_THREADS)
        .thread_keep_alive(Duration::from_secs(1))
        .thread_name("agent-rl-http")
        .enable_io()
        .enable_time()
        .build()
        .map_err(ServeError::Runtime)?;
    let (shutdown, stopped) = oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("agent-rl-serve".into())
        .spawn(move || {
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener)?;
                serve(
                    listener,
                    router(state, policy),
                    header_read_timeout,
                    stopped,
                )
                .await;
                Ok(())
            })
        })
        .map_err(ServeError::Runtime)?;
    tracing::info!(%bound, "serving the OpenAI-compatible API");
    Ok(ServerHandle {
        address: bound,
        metrics,
        shutdown: Some(shutdown),
        thread: Some(thread),
    })
}
