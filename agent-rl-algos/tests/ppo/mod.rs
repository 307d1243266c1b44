//! PPO trainer: smoke tests (every parameter moves, TRL metric names, multi-turn rollouts,
//! checkpoint/resume, bad settings). The learning proof is not written yet (issue 17).

mod smoke;
