//! Rows with their own settings decode together exactly as each would alone.

use std::sync::Mutex;

use agent_rl_core::Qwen2Config;
use agent_rl_core::generation::{
    GenerationRow, RowHooks, SamplingConfig, generate_ids, generate_rows,
};
use agent_rl_core::weights::random_model;

use crate::common::B;

fn sampled(seed: u64, max_new_tokens: usize) -> SamplingConfig {
    SamplingConfig {
        max_new_tokens,
        temperature: 0.9,
        top_p: 0.95,
        seed,
        ignore_eos: true,
        ..SamplingConfig::default()
    }
}

#[test]
fn mixed_rows_match_their_solo_runs_and_report_top_logprobs() {
    let config = Qwen2Config {
        vocab_size: 384,
        ..Qwen2Config::tiny()
    };
    let model = random_model::<B>(&config, 5, 0.3, &Default::default()).unwrap();
    let rows = vec![
        GenerationRow {
            prompt: vec![3, 4, 5, 6],
            sampling: SamplingConfig::greedy(5),
            stream: 0,
            top_logprobs: 3,
        },
        GenerationRow {
            prompt: vec![7, 8],
            sampling: sampled(11, 6),
            stream: 1,
            top_logprobs: 0,
        },
        GenerationRow {
            prompt: vec![9],
            sampling: sampled(12, 0),
            stream: 0,
            top_logprobs: 0,
        },
    ];
    let seen = Mutex::new(Vec::new());
    let sink = |row: usize, token: u32, _: f32| seen.lock().unwrap().push((row, token));
    let hooks = RowHooks {
        stop_check: None,
        on_token: Some(&sink),
    };
    let out = generate_rows(&model, &rows, &[], hooks).unwrap();
    // Row 0 alone (stream 0 = its index in a one-row call).
    let solo = generate_ids(&model, &[rows[0].prompt.clone()], &rows[0].sampling, &[]).unwrap();
    assert_eq!(out[0].token_ids, solo[0].token_ids);
    // Row 1 alone at index 1 of a call (stream 1) with the same seed.
    let pair = generate_ids(
        &model,
        &[vec![1], rows[1].prompt.clone()],
        &rows[1].sampling,
        &[],
    )
    .unwrap();
    assert_eq!(out[1].token_ids, pair[1].token_ids);
    assert_eq!(out[1].token_ids.len(), 6);
    assert!(out[2].token_ids.is_empty());
    // Top alternatives: one list per token, sorted, the greedy pick first with its logprob.
    assert_eq!(out[0].top_logprobs.len(), 5);
    for (step, top) in out[0].top_logprobs.iter().enumerate() {
        assert_eq!(top.len(), 3);
        assert_eq!(top[0].0, out[0].token_ids[step]);
        assert!((top[0].1 - out[0].logprobs[step]).abs() < 1e-6);
        assert!(top.windows(2).all(|w| w[0].1 >= w[1].1));
    }
    assert!(out[1].top_logprobs.is_empty());
    // The sink saw every token of every row, in order per row.
    let seen = seen.into_inner().unwrap();
    for (row, generation) in out.iter().enumerate() {
        let tokens: Vec<u32> = seen.iter().filter(|s| s.0 == row).map(|s| s.1).collect();
        assert_eq!(tokens, generation.token_ids);
    }
}

#[test]
fn bad_rows_are_named() {
    let model = random_model::<B>(&Qwen2Config::tiny(), 5, 0.3, &Default::default()).unwrap();
    let row = |prompt: Vec<u32>, temperature: f32| GenerationRow {
        prompt,
        sampling: SamplingConfig {
            temperature,
            ..SamplingConfig::greedy(2)
        },
        ..GenerationRow::default()
    };
    let err = generate_rows(
        &model,
        &[row(vec![1], 0.0), row(vec![], 0.0)],
        &[],
        RowHooks::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("rows[1]"), "{err}");
    let err = generate_rows(&model, &[row(vec![1], -1.0)], &[], RowHooks::default()).unwrap_err();
    assert!(err.to_string().contains("temperature"), "{err}");
}
