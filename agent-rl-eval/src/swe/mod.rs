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
//! | commands with a time limit and process-group kill | [`command`] |

pub mod command;
pub mod env_spec;
pub mod grader;
pub mod harness;
pub mod instance;
pub mod log_parser;
pub mod patch;
pub mod prediction;
pub mod venv;
pub mod verdict;
pub mod workspace;

pub use env_spec::{EnvSpec, builtin_specs, load_specs, spec_for};
pub use grader::{GradeConfig, GradeStatus, InstanceGrade, LocalGrader};
pub use harness::{HarnessRun, HarnessSummary};
pub use instance::{InstanceMetadata, SweInstance, load_instance_metadata, load_instances};
pub use log_parser::{LogParser, TestStatus};
pub use prediction::{Prediction, read_predictions, write_predictions};
pub use workspace::{RepoSource, Workspace};
