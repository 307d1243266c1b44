//! SWE-bench tests: the real data (`AGENT_RL_DATA`, ignored by default) and a synthetic
//! repository with a real bug (standard-library Python only) for the scaffold and grader.

mod fixture;
mod grader_integrity;
mod grpo;
mod real_data;
mod scaffold;
mod security;
