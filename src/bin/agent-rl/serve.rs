//! `agent-rl serve`: the OpenAI-compatible server over a local model.

use std::io::Write;

use agent_rl::backend::PolicyJob;
use agent_rl::core::BurnPolicy;
use agent_rl::core::Qwen2ForCausalLm;
use agent_rl::serve::{ServeConfig, start};
use anyhow::Context;
use burn::prelude::Backend;

use crate::model_args::{AdapterArgs, ModelArgs, with_adapted_policy};

/// Serve a model with OpenAI's chat-completions API.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    adapter: AdapterArgs,
    /// Address to listen on (loopback by default; use 0.0.0.0 to expose it).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port (0 = any free port; the bound address is printed).
    #[arg(long, default_value_t = 8000)]
    port: u16,
    /// Name clients send as `model` (default: the model directory's name; for a run's
    /// `final_model/` or `checkpoint-<step>/`, `<run directory>/<folder>`, e.g.
    /// `grpo/final_model`).
    #[arg(long)]
    served_model_name: Option<String>,
    /// Most sequences decoded together in one batch.
    #[arg(long, default_value_t = 16)]
    max_batch: usize,
    /// Largest `max_tokens` a request may ask for.
    #[arg(long, default_value_t = 4096)]
    max_tokens_limit: usize,
    /// Environment variable holding the API key clients must send (none = no key).
    #[arg(long)]
    api_key_env: Option<String>,
    /// Allow `/v1/load_lora_adapter` and `/v1/unload_lora_adapter` (they read adapter
    /// directories from this machine's disk).
    #[arg(long)]
    allow_runtime_lora: bool,
    /// Allow `/update_weights_from_disk` (SGLang's route: replace the served weights with a
    /// checkpoint directory on this machine's disk, as `train grpo` with `[rollouts]` publishes a
    /// fully fine-tuned policy).
    /// Needs --api-key-env: without a key any local process could swap the model.
    #[arg(long)]
    allow_weight_updates: bool,
    /// Most generation requests held at once (being read, queued or decoded); more are
    /// answered 429 with `Retry-After`.
    #[arg(long, default_value_t = 256)]
    max_queued_requests: usize,
    /// Seconds a client may take to send its request headers (also how long an idle
    /// keep-alive connection is kept); then the connection is closed.
    #[arg(long, default_value_t = 30)]
    header_read_timeout_secs: u64,
    /// Seconds a client may take to send its request body; then it gets 408.
    #[arg(long, default_value_t = 60)]
    body_read_timeout_secs: u64,
    /// Let web pages of this origin call the API (`scheme://host[:port]`, repeatable; `*` for
    /// any). By default requests carrying an `Origin` header are refused.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    /// Accept requests naming this host (repeatable; `*` for any). By default only IP
    /// addresses and `localhost` are accepted in `Host`, which defeats DNS rebinding.
    #[arg(long = "allow-host", value_name = "NAME")]
    allow_hosts: Vec<String>,
}

struct Job {
    config: ServeConfig,
}

impl PolicyJob for Job {
    type Output = ();

    fn run<B: Backend>(self, policy: BurnPolicy<B>) -> anyhow::Result<()> {
        run_server(policy, self.config)
    }
}

fn run_server<B: Backend>(policy: BurnPolicy<B>, config: ServeConfig) -> anyhow::Result<()>
where
    Qwen2ForCausalLm<B>: Send + 'static,
{
    let name = config.model_name.clone();
    let server = start(policy, config)?;
    // The one line scripts wait for (the port is real when --port 0 was given).
    writeln!(
        std::io::stdout().lock(),
        "serving `{name}` at {}",
        server.base_url()
    )?;
    server.wait()?;
    Ok(())
}

/// Milliseconds freed memory stays in the server process before it is returned to the OS: at
/// once, since mimalloc purges late pages only on later activity of the thread that freed them,
/// and a server's threads go idle after a spike (soak test: 1000 ms kept 166 MB of a 197 MB peak
/// resident, 100 ms 140 of 184 MB, 0 ms 60 of 143 MB, from 33-38 MB at the start).
const RETURN_FREED_MEMORY_AFTER_MS: u32 = 0;

/// The name a model folder is served as without `--served-model-name`: its own name, prefixed
/// with its run directory's for the folders every run has (`final_model`, `checkpoint-<step>`).
fn default_served_name(model: &std::path::Path) -> String {
    let absolute = std::fs::canonicalize(model).unwrap_or_else(|_| model.to_path_buf());
    let name = |path: &std::path::Path| {
        path.file_name()
            .map(|name| name.to_string_lossy().into_owned())
    };
    let Some(folder) = name(&absolute) else {
        return "agent-rl".into();
    };
    let generic = folder == "final_model" || folder.starts_with("checkpoint-");
    match absolute.parent().and_then(name) {
        Some(run) if generic => format!("{run}/{folder}"),
        _ => folder,
    }
}

/// Runs `serve`.
pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    // A server's load comes in bursts: give a spike's memory back.
    agent_rl::host_allocator::return_freed_memory_after(RETURN_FREED_MEMORY_AFTER_MS);
    let api_key = match &args.api_key_env {
        Some(var) => Some(
            std::env::var(var)
                .with_context(|| format!("--api-key-env {var}: the variable is not set"))?,
        ),
        None => None,
    };
    let model_name = args
        .served_model_name
        .clone()
        .unwrap_or_else(|| default_served_name(&args.model.model));
    let config = ServeConfig {
        host: args.host.clone(),
        port: args.port,
        model_name,
        max_batch: args.max_batch,
        max_tokens_limit: args.max_tokens_limit,
        api_key,
        allow_runtime_lora: args.allow_runtime_lora,
        allow_weight_updates: args.allow_weight_updates,
        max_queued_requests: args.max_queued_requests,
        header_read_timeout_ms: args.header_read_timeout_secs.saturating_mul(1000),
        body_read_timeout_ms: args.body_read_timeout_secs.saturating_mul(1000),
        allow_origins: args.allow_origins.clone(),
        allow_hosts: args.allow_hosts.clone(),
        ..ServeConfig::default()
    };
    config.validate()?;
    with_adapted_policy(&args.model, &args.adapter, Job { config })
}
