//! τ-bench tests: conformance over the real data (`AGENT_RL_DATA`) and hand-written fault cases.

mod conformance;
mod env;
mod faults;
mod runner;
