//! The DAPO-style soft over-length penalty.

use super::config::OverlongConfig;

/// Penalty (`>= 0`, to subtract) for a turn of `num_tokens` under a budget of `max_new_tokens`:
/// `0` up to `max_new_tokens − buffer`, rising linearly to `max_penalty` at the budget and staying
/// there beyond it; `buffer = ceil(buffer_fraction × max_new_tokens)`. `0` when the budget is 0
/// (unknown).
///
/// ```
/// use agent_rl_rewards::{overlong_penalty, OverlongConfig};
/// let config = OverlongConfig { buffer_fraction: 0.25, max_penalty: 1.0 };
/// assert_eq!(overlong_penalty(70, 100, &config), 0.0);
/// assert_eq!(overlong_penalty(90, 100, &config), 0.6);
/// assert_eq!(overlong_penalty(100, 100, &config), 1.0);
/// ```
pub fn overlong_penalty(num_tokens: usize, max_new_tokens: usize, config: &OverlongConfig) -> f32 {
    if max_new_tokens == 0 {
        return 0.0;
    }
    let buffer = ((config.buffer_fraction as f64 * max_new_tokens as f64).ceil() as usize)
        .clamp(1, max_new_tokens);
    let free = max_new_tokens - buffer;
    if num_tokens <= free {
        0.0
    } else if num_tokens >= max_new_tokens {
        config.max_penalty
    } else {
        ((num_tokens - free) as f64 / buffer as f64 * f64::from(config.max_penalty)) as f32
    }
}
