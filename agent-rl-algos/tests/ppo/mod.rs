//! PPO trainer: smoke tests (every parameter moves, TRL metric names, multi-turn rollouts,
//! checkpoint/resume, bad settings) and the RLHF learning proof (SFT → reward model → PPO).

mod learning;
mod smoke;
