//! Choosing the next token from one row of logits (host side), as HF's logits processors do:
//! temperature → top-k → top-p → min-p → sample.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::config::SamplingConfig;

/// Log-softmax of `values` in f64 for accuracy, returned as f32.
pub(crate) fn log_softmax(values: &[f32]) -> Vec<f32> {
    let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = values.iter().map(|&v| f64::from(v - max).exp()).sum();
    let log_sum = sum.ln() as f32 + max;
    values.iter().map(|&v| v - log_sum).collect()
}

/// Index of the first maximum (ties → lowest index, as `torch.argmax`).
pub(crate) fn argmax(values: &[f32]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] {
            best = i;
        }
    }
    best
}

/// The `count` most likely tokens of `logits` with their log-probabilities under the same
/// distribution [`sample_token`] reports (temperature-scaled; raw when greedy), most likely
/// first, ties to the lowest id.
pub(crate) fn top_logprobs(
    logits: &[f32],
    config: &SamplingConfig,
    count: usize,
) -> Vec<(u32, f32)> {
    let logprobs = if config.is_greedy() {
        log_softmax(logits)
    } else {
        let scaled: Vec<f32> = logits.iter().map(|&l| l / config.temperature).collect();
        log_softmax(&scaled)
    };
    let mut order: Vec<usize> = (0..logprobs.len()).collect();
    let count = count.min(order.len());
    if count == 0 {
        return Vec::new();
    }
    let by_logprob = |a: &usize, b: &usize| logprobs[*b].total_cmp(&logprobs[*a]).then(a.cmp(b));
    order.select_nth_unstable_by(count - 1, by_logprob);
    order.truncate(count);
    order.sort_by(by_logprob);
    order.into_iter().map(|i| (i as u32, logprobs[i])).collect()
}

/// Picks a token from `logits`; returns the token and its log-probability under the
/// temperature-scaled distribution (raw when greedy), before filtering.
pub(crate) fn sample_token(
    logits: &[f32],
    config: &SamplingConfig,
    rng: &mut ChaCha8Rng,
) -> (u32, f32) {
    if config.is_greedy() {
        let token = argmax(logits);
        let logprobs = log_softmax(logits);
        return (token as u32, logprobs[token]);
    }
    let scaled: Vec<f32> = logits.iter().map(|&l| l / config.temperature).collect();
    let logprobs = log_softmax(&scaled);
    let mut order: Vec<usize> = (0..scaled.len()).collect();
    let filtering = config.top_k > 0 || config.top_p < 1.0 || config.min_p > 0.0;
    let mut keep = scaled.len();
    if filtering {
        order.sort_by(|&a, &b| scaled[b].total_cmp(&scaled[a]).then(a.cmp(&b)));
        if config.top_k > 0 {
            keep = keep.min(config.top_k);
        }
        if config.top_p < 1.0 {
            // Smallest prefix whose mass reaches top_p (renormalised over the top-k survivors).
            let mass: f64 = order[..keep]
                .iter()
                .map(|&i| f64::from(logprobs[i]).exp())
                .sum();
            let mut cumulative = 0.0;
            let mut count = 0;
            for &i in &order[..keep] {
                cumulative += f64::from(logprobs[i]).exp() / mass;
                count += 1;
                if cumulative >= f64::from(config.top_p) {
                    break;
                }
            }
            keep = count.max(1);
        }
        if config.min_p > 0.0 {
            let threshold = logprobs[order[0]] + config.min_p.ln();
            keep = order[..keep]
                .iter()
                .take_while(|&&i| logprobs[i] >= threshold)
                .count()
                .max(1);
        }
    }
    let survivors = &order[..keep];
    let weights: Vec<f64> = survivors
        .iter()
        .map(|&i| f64::from(logprobs[i]).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    let mut draw = rng.random::<f64>() * total;
    let mut chosen = survivors[survivors.len() - 1];
    for (&i, &w) in survivors.iter().zip(&weights) {
        if draw < w {
            chosen = i;
            break;
        }
        draw -= w;
    }
    (chosen as u32, logprobs[chosen])
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn config(temperature: f32, top_k: usize, top_p: f32, min_p: f32) -> SamplingConfig {
        SamplingConfig {
            temperature,
            top_k,
            top_p,
            min_p,
            ..SamplingConfig::default()
        }
    }

    fn draws(logits: &[f32], config: &SamplingConfig) -> Vec<u32> {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        (0..400)
            .map(|_| sample_token(logits, config, &mut rng).0)
            .collect()
    }

    #[test]
    fn greedy_takes_first_max_and_reports_raw_logprob() {
        let (token, logprob) = sample_token(
            &[1.0, 3.0, 3.0],
            &SamplingConfig::greedy(1),
            &mut ChaCha8Rng::seed_from_u64(0),
        );
        assert_eq!(token, 1);
        let expected = 3.0 - (1f32.exp() + 2.0 * 3f32.exp()).ln();
        assert!((logprob - expected).abs() < 1e-6);
    }

    #[test]
    fn filters_restrict_the_support() {
        let logits = [4.0, 3.0, 2.0, 1.0, 0.0];
        assert!(
            draws(&logits, &config(1.0, 2, 1.0, 0.0))
                .iter()
                .all(|&t| t < 2)
        );
        // probs ≈ .64 .23 .09 .03 .01: top_p .8 keeps two tokens.
        let kept = draws(&logits, &config(1.0, 0, 0.8, 0.0));
        assert!(kept.iter().all(|&t| t < 2) && kept.contains(&1));
        // min_p .3: threshold .19 keeps two tokens.
        assert!(
            draws(&logits, &config(1.0, 0, 1.0, 0.3))
                .iter()
                .all(|&t| t < 2)
        );
        // No filter: every token shows up over 400 draws at temperature 3.
        let all = draws(&logits, &config(3.0, 0, 1.0, 0.0));
        assert!((0..5).all(|t| all.contains(&t)));
    }

    #[test]
    fn top_logprobs_are_sorted_and_match_the_sampled_distribution() {
        let logits = [1.0, 3.0, 2.0, 3.0];
        let greedy = SamplingConfig::greedy(1);
        let top = top_logprobs(&logits, &greedy, 3);
        let ids: Vec<u32> = top.iter().map(|&(id, _)| id).collect();
        assert_eq!(ids, [1, 3, 2]);
        let (token, logprob) = sample_token(&logits, &greedy, &mut ChaCha8Rng::seed_from_u64(0));
        assert_eq!((token, logprob), top[0]);
        let hot = config(2.0, 0, 1.0, 0.0);
        let scaled = log_softmax(&[0.5, 1.5, 1.0, 1.5]);
        let top = top_logprobs(&logits, &hot, 10);
        assert_eq!(top.len(), 4);
        assert!((top[2].1 - scaled[2]).abs() < 1e-6);
        assert!(top_logprobs(&logits, &hot, 0).is_empty());
    }

    #[test]
    fn sampling_frequencies_follow_the_distribution() {
        let logits = [0.0, 2f32.ln()];
        let picks = draws(&logits, &config(1.0, 0, 1.0, 0.0));
        let share = picks.iter().filter(|&&t| t == 1).count() as f32 / picks.len() as f32;
        assert!((share - 2.0 / 3.0).abs() < 0.07, "{share}");
    }
}
