//! Generation that carries its cache across calls equals generation from the full sequence.

use agent_rl_core::generation::{SamplingConfig, generate_continuations, generate_ids};
use agent_rl_core::model::KvCache;
use agent_rl_core::weights::random_model;
use agent_rl_core::{Qwen2Config, Qwen2ForCausalLm};
use burn::prelude::*;

use crate::common::{B, assert_close};

fn model(seed: u64) -> Qwen2ForCausalLm<B> {
    let config = Qwen2Config {
        vocab_size: 384,
        ..Qwen2Config::tiny()
    };
    random_model(&config, seed, 0.3, &Default::default()).unwrap()
}

fn sampling(seed: u64, max_new_tokens: usize) -> SamplingConfig {
    SamplingConfig {
        max_new_tokens,
        temperature: 1.0,
        seed,
        // About one id in nine stops a row: rows leave the batch at different steps.
        stop_token_ids: (0..384).step_by(9).collect(),
        ..SamplingConfig::default()
    }
}

#[test]
fn three_calls_on_a_carried_cache_sample_what_full_sequences_sample() {
    let model = model(5);
    // Rows of different lengths, two of them equal (shared prefill on the first call).
    let mut full: Vec<Vec<u32>> = vec![vec![3, 4, 5, 6, 7], vec![3, 4, 5, 6, 7], vec![20, 21]];
    let mut segments = full.clone();
    let mut cache: Option<KvCache<B>> = None;
    let mut rows_that_differed = 0;
    for call in 0..3u64 {
        let reference = generate_ids(&model, &full, &sampling(call, 12), &[]).unwrap();
        let continued = generate_continuations(
            &model,
            cache.take(),
            &segments,
            &sampling(call, 12),
            &[],
            None,
        )
        .unwrap();
        for (row, (expected, got)) in reference.iter().zip(&continued.generations).enumerate() {
            assert_eq!(expected.token_ids, got.token_ids, "call {call}, row {row}");
            assert_eq!(expected.finish_reason, got.finish_reason);
            assert_close(&got.logprobs, &expected.logprobs, 1e-4, 1e-4, "log-probs");
        }
        // The cache holds every token except each row's last sampled one.
        let held = continued.cache.real_lengths();
        for (row, generation) in continued.generations.iter().enumerate() {
            assert_eq!(held[row], full[row].len() + generation.token_ids.len() - 1);
        }
        let lengths: Vec<usize> = continued
            .generations
            .iter()
            .map(|g| g.token_ids.len())
            .collect();
        rows_that_differed += usize::from(lengths.iter().any(|&l| l != lengths[0]));
        cache = Some(continued.cache);
        // Append the last sampled token and a "tool result" of a different length per row.
        for (row, generation) in continued.generations.iter().enumerate() {
            let result: Vec<u32> = (0..=row as u32 + call as u32).map(|i| 40 + i).collect();
            full[row].extend(&generation.token_ids);
            full[row].extend(&result);
            segments[row] = generation
                .token_ids
                .last()
                .copied()
                .into_iter()
                .chain(result)
                .collect();
        }
    }
    assert!(
        rows_that_differed > 0,
        "rows left the batch at different steps"
    );
}

#[test]
fn continuation_inputs_are_checked() {
    let model = model(6);
    let greedy = SamplingConfig::greedy(4);
    let err =
        generate_continuations(&model, None, &[vec![1], vec![]], &greedy, &[], None).unwrap_err();
    assert!(err.to_string().contains("segment 1 is empty"), "{err}");
    let err =
        generate_continuations(&model, None, &[vec![1, 999]], &greedy, &[], None).unwrap_err();
    assert!(err.to_string().contains("999"), "{err}");
    let continued =
        generate_continuations(&model, None, &[vec![1, 2], vec![3]], &greedy, &[], None).unwrap();
    let err = generate_continuations(
        &model,
        Some(continued.cache),
        &[vec![1]],
        &greedy,
        &[],
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("2 rows but 1 segments"), "{err}");
}

#[test]
fn assembled_caches_keep_each_row_and_pad_on_the_left() {
    let device = Default::default();
    let layer = |values: Vec<f32>, rows: usize, len: usize| {
        let t = Tensor::<B, 4>::from_data(TensorData::new(values, [rows, 1, len, 1]), &device);
        Some((t.clone(), t))
    };
    let short = KvCache {
        layers: vec![layer(vec![7.0], 1, 1)],
        mask: vec![vec![true]],
    };
    let long = KvCache {
        layers: vec![layer(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3)],
        mask: vec![vec![true; 3], vec![false, true, true]],
    };
    // Result rows: 0 and 2 from `long`, 1 from `short`.
    let cache = KvCache::assemble(vec![(vec![0, 2], long), (vec![1], short)], 3);
    assert_eq!(
        cache.mask,
        [
            vec![true; 3],
            vec![false, false, true],
            vec![false, true, true]
        ]
    );
    let keys = cache.layers[0]
        .clone()
        .unwrap()
        .0
        .into_data()
        .into_vec::<f32>()
        .unwrap();
    assert_eq!(keys, [1.0, 2.0, 3.0, 0.0, 0.0, 7.0, 4.0, 5.0, 6.0]);
}
