//! Flags for a model behind an OpenAI-compatible endpoint (`agent-rl serve`, vLLM, SGLang,
//! llama.cpp, OpenAI), shared by the evaluators: `--endpoint URL [--endpoint-model NAME]` for
//! the evaluated agent (`eval bfcl`, `eval swe run`), and `--api-key-env VAR [--tokenizer DIR]`
//! for every client (also `eval tau run --user-endpoint`).

use std::path::PathBuf;

#[cfg(feature = "serve")]
use agent_rl::remote::RemotePolicy;

/// `--endpoint URL [--endpoint-model NAME]` plus the [`ClientArgs`]: the evaluated agent on an
/// endpoint instead of `--model DIR`.
#[derive(Debug, Clone, clap::Args)]
pub struct EndpointArgs {
    /// Evaluate the model behind this OpenAI-compatible endpoint (base URL up to `/v1`, e.g.
    /// `http://127.0.0.1:8000/v1`) instead of `--model`.
    #[arg(long, conflicts_with = "model")]
    pub endpoint: Option<String>,
    /// The `model` name to ask `--endpoint` for (default `agent-rl`).
    #[arg(long, requires = "endpoint")]
    pub endpoint_model: Option<String>,
    /// Key and tokenizer of the endpoint.
    #[command(flatten)]
    pub client: ClientArgs,
}

/// `--api-key-env VAR [--tokenizer DIR]`: how to talk to any endpoint given.
#[derive(Debug, Clone, clap::Args)]
pub struct ClientArgs {
    /// Environment variable holding the endpoint's API key (sent as a bearer token).
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// The served model's tokenizer (a snapshot folder with `tokenizer.json`): decodes the
    /// token ids that `agent-rl serve` (and vLLM with `return_token_ids`) return and parses
    /// tool calls exactly as a local run does; without it the server's text and OpenAI
    /// `tool_calls` are used as they come.
    #[arg(long)]
    pub tokenizer: Option<PathBuf>,
}

impl ClientArgs {
    /// A client of `model` at `url` (`flag` names the URL's flag in errors).
    #[cfg(feature = "serve")]
    pub fn policy(&self, flag: &str, url: &str, model: &str) -> anyhow::Result<RemotePolicy> {
        use std::sync::Arc;

        use agent_rl::core::ChatTokenizer;
        use agent_rl::remote::RemoteConfig;
        use anyhow::Context;

        let config = RemoteConfig {
            base_url: url.to_owned(),
            model: model.to_owned(),
            api_key_env: self.api_key_env.clone(),
            ..RemoteConfig::default()
        };
        let policy = RemotePolicy::new(&config).with_context(|| format!("{flag} {url}"))?;
        Ok(match &self.tokenizer {
            Some(dir) => policy.with_tokenizer(Arc::new(
                ChatTokenizer::from_dir(dir)
                    .with_context(|| format!("--tokenizer {}", dir.display()))?,
            )),
            None => policy,
        })
    }
}

impl EndpointArgs {
    /// Runs `job` on the `--endpoint` client.
    ///
    /// # Errors
    /// A bad URL or an unset key variable (naming the flag), the job's errors, and — in a
    /// binary built without the `serve` feature — any use at all.
    pub fn run(
        &self,
        url: &str,
        job: impl FnOnce(&mut dyn agent_rl::core::Policy) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        #[cfg(feature = "serve")]
        {
            let model = self.endpoint_model.as_deref().unwrap_or("agent-rl");
            let mut policy = self.client.policy("--endpoint", url, model)?;
            job(&mut policy)
        }
        #[cfg(not(feature = "serve"))]
        {
            let _ = (url, job);
            anyhow::bail!("--endpoint needs a binary built with the `serve` feature")
        }
    }
}
