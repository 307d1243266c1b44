//! τ-bench (retail and airline): tool environments with a simulated user.
//!
//! The databases are loaded from the upstream data layout (`<data>/retail/orders.json`, …);
//! every tool reproduces the original's validation order, database changes and observation
//! strings byte for byte (Python `json.dumps` formatting, int/float distinction), so that a
//! trajectory means the same here as there. The reward replays the task's ground truth on a
//! fresh database and compares τ-bench's database hashes.
//!
//! | type | role |
//! |---|---|
//! | [`TauDb`] | a domain database; [`TauDb::call`] dispatches a tool call by name |
//! | [`TauTask`] | a task record of `tasks_<split>.json` |
//! | [`replay_task`] | ground-truth replay with observations and reward |
//! | [`TauSuite`], [`TauEnvironment`] | a split ready to run; the core `Environment` |
//! | [`ScriptedUser`], [`LlmUser`] | simulated customers behind [`UserSimulator`] |
//! | [`run_tau`], [`TauReport`] | an agent `Policy` on a split; average reward, pass^k |
//!
//! ```
//! use agent_rl_eval::tau::{CallStatus, TauDb, retail::RetailDb};
//! use serde_json::json;
//!
//! let tables = json!({
//!     "orders": {"#W1": {"order_id": "#W1", "user_id": "u1", "status": "delivered",
//!                        "payment_history": []}},
//!     "products": {},
//!     "users": {"u1": {"payment_methods": {}}},
//! });
//! let mut db = TauDb::Retail(serde_json::from_value::<RetailDb>(tables)?);
//! let outcome = db.call("cancel_pending_order", &json!({"order_id": "#W1", "reason": "x"}));
//! assert_eq!(outcome.observation, "Error: non-pending order cannot be cancelled");
//! assert_eq!(outcome.status, CallStatus::ToolError);
//! let outcome = db.call("get_order_details", &json!({"order_id": "#W1"}));
//! assert!(outcome.observation.starts_with(r##"{"order_id": "#W1", "user_id": "u1""##));
//! # Ok::<(), serde_json::Error>(())
//! ```

mod access;
pub mod airline;
mod args;
mod calculate;
mod customer;
pub mod data;
pub mod domain;
pub mod env;
mod episode;
pub mod py;
pub mod pyjson;
pub mod replay;
pub mod report;
pub mod retail;
pub mod reward;
pub mod runner;
pub mod schema;
pub mod user;

pub use customer::{LlmCustomers, customer_prompt};
pub use data::{ReplayFile, ReplayStep, ReplayTask, TauAction, TauTask};
pub use domain::{CallStatus, Domain, TauDb, ToolOutcome};
pub use env::{EpisodeStats, TauEnvironment, TauEnvironmentFactory, TauSuite};
pub use replay::{load_tasks, replay_actions, replay_split, replay_task};
pub use report::TauReport;
pub use reward::{RewardInfo, TERMINATE_TOOL, compute_reward, pass_hat_k};
pub use runner::{EpisodeResult, TauRunConfig, ToolCallCounts, run_tau};
pub use user::{LlmUser, STOP_TOKEN, ScriptedUser, UserSimulator, load_user_prompt};
