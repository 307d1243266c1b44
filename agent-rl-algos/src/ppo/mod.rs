//! PPO (RLHF with a critic): the per-token reward shaping of a rollout batch.

mod rewards;

pub use rewards::{
    TokenRewards, apply_missing_eos_penalty, kl_penalized_rewards, last_policy_token,
};
