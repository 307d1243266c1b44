//! SWE-bench Verified: instances, predictions in the official format, the bridge to the
//! official (Docker) harness, a local grader that decides "resolved" as the harness does,
//! an agent scaffold over any [`agent_rl_core::Policy`], and the same scaffold as an RL
//! environment.
//!
//! | concept | module |
//! |---|---|
//! | instances (`verified_mini50.jsonl`, `verified_instances.jsonl`) | [`instance`] |
//! | predictions (`instance_id`, `model_name_or_path`, `model_patch`) | [`prediction`] |
//! | the official harness command line and summary | [`harness`] |
//! | per-version test environments as data | [`env_spec`], [`venv`] |
//! | checkouts, patches, test logs, verdict, grading | [`workspace`], [`patch`], [`log_parser`], [`verdict`], [`grader`] |
//! | grader integrity: tampering, the sandboxed tree, the harness's test report | [`tamper`], [`tree_snapshot`], [`graded_tree`], `test_report` |
//! | commands with a time limit and process-group kill | [`command`] |
//! | the agent's tools, confined to the workspace | [`aci`], [`file_tools`], [`confine`], [`beneath`], [`sandbox`] |
//! | the scaffold as an RL environment; the evaluation loop over a `Policy` | [`env`](mod@env), [`runner`] |
//! | the data folder (instances, trees); the report | [`data`], [`report`] |

pub mod aci;
pub mod beneath;
pub mod command;
pub mod confine;
pub mod data;
pub mod env;
pub mod env_spec;
pub mod file_tools;
pub mod graded_tree;
pub mod grader;
pub mod harness;
pub mod instance;
pub mod log_parser;
pub mod patch;
pub mod prediction;
pub mod report;
pub mod runner;
pub mod sandbox;
pub mod tamper;
mod test_report;
mod test_temp;
pub mod tree_snapshot;
pub mod venv;
pub mod verdict;
pub mod workspace;

pub use aci::{Aci, AciConfig, SUBMIT_TOOL, ToolResult, tool_specs};
pub use data::{grade_predictions, load_data_instances, source_for, tasks_for};
pub use env::{
    SweEnvConfig, SweEnvironment, SweEnvironmentFactory, SweFinish, SweOutcome, SweTask,
    resolved_reward,
};
pub use env_spec::{EnvSpec, builtin_specs, load_specs, spec_for};
pub use grader::{GradeConfig, GradeStatus, InstanceGrade, LocalGrader};
pub use harness::{HarnessRun, HarnessSummary};
pub use instance::{InstanceMetadata, SweInstance, load_instance_metadata, load_instances};
pub use log_parser::{LogParser, TestStatus};
pub use prediction::{Prediction, read_predictions, write_predictions};
pub use report::{SweReport, SweReportRow};
pub use runner::{
    SweEpisode, SweRunConfig, episodes_path, predictions, read_episodes, run_swe, write_episodes,
};
pub use sandbox::SandboxMode;
pub use workspace::{RepoSource, Workspace};
