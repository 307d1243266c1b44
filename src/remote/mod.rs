//! A [`Policy`](agent_rl_core::Policy) backed by any OpenAI-compatible endpoint: `agent-rl
//! serve`, vLLM, SGLang, llama.cpp's server, or OpenAI itself (build with the `tls` feature for
//! `https://`), and [`RemoteRollouts`], which samples GRPO's episodes on such a server and
//! publishes the trained LoRA adapter to it after every optimiser step.
//!
//! ```no_run
//! use agent_rl::core::{ChatRequest, Message, Policy, SamplingConfig};
//! use agent_rl::remote::{RemoteConfig, RemotePolicy};
//!
//! let config = RemoteConfig {
//!     base_url: "http://127.0.0.1:8000/v1".into(),
//!     model: "Qwen2.5-0.5B-Instruct".into(),
//!     api_key_env: Some("AGENT_RL_API_KEY".into()),
//!     ..RemoteConfig::default()
//! };
//! let mut policy = RemotePolicy::new(&config)?;
//! let request = ChatRequest { messages: vec![Message::user("Hi")], tools: vec![] };
//! let out = policy.generate(&[request], &SamplingConfig::greedy(32))?;
//! println!("{}", out[0].text);
//! # Ok::<(), agent_rl::core::CoreError>(())
//! ```

mod config;
mod customers;
mod http;
mod policy;
mod rollouts;

pub use config::RemoteConfig;
pub use customers::RemoteCustomers;
pub use policy::RemotePolicy;
pub use rollouts::{DEFAULT_ADAPTER_NAME, RemoteRollouts};
