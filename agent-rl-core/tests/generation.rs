//! KV-cache decoding, seeded sampling, and teacher-forced scores agree with the full forward.

use std::sync::Arc;

use agent_rl_core::generation::{SamplingConfig, generate_ids, token_logprobs, token_scores};
use agent_rl_core::weights::random_model;
use agent_rl_core::{
    BurnPolicy, ChatRequest, ChatTokenizer, Message, Policy, Qwen2Config, Qwen2ForCausalLm,
};
use burn::backend::Autodiff;
use burn::prelude::*;

use crate::common::{B, assert_close, fixture};

fn model<Bk: Backend>(seed: u64) -> Qwen2ForCausalLm<Bk> {
    let config = Qwen2Config {
        vocab_size: 384,
        ..Qwen2Config::tiny()
    };
    random_model(&config, seed, 0.3, &Default::default()).unwrap()
}

fn ids(rows: &[Vec<u32>]) -> Tensor<B, 2, Int> {
    let flat: Vec<i64> = rows.iter().flatten().map(|&i| i64::from(i)).collect();
    Tensor::from_data(
        TensorData::new(flat, [rows.len(), rows[0].len()]),
        &Default::default(),
    )
}

#[test]
fn kv_cache_decoding_equals_full_forward() {
    let model = model::<B>(11);
    // Left-padded batch: row 0 has 3 padding positions.
    let rows = vec![
        vec![0, 0, 0, 5, 6, 7, 8, 9, 10, 11],
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    ];
    let mask: Vec<Vec<bool>> = vec![(0..10).map(|i| i >= 3).collect(), vec![true; 10]];
    let full = model
        .forward(ids(&rows), &mask)
        .into_data()
        .into_vec::<f32>()
        .unwrap();
    let vocab = 384;
    let mut cache = model.new_cache(2);
    let prefix: Vec<Vec<u32>> = rows.iter().map(|r| r[..6].to_vec()).collect();
    let prefix_mask: Vec<Vec<bool>> = mask.iter().map(|m| m[..6].to_vec()).collect();
    let mut pieces =
        vec![model.logits(model.forward_hidden(ids(&prefix), &prefix_mask, Some(&mut cache)))];
    for t in 6..10 {
        let step: Vec<Vec<u32>> = rows.iter().map(|r| vec![r[t]]).collect();
        pieces.push(model.logits(model.forward_hidden(
            ids(&step),
            &[vec![true], vec![true]],
            Some(&mut cache),
        )));
    }
    let cached = Tensor::cat(pieces, 1)
        .into_data()
        .into_vec::<f32>()
        .unwrap();
    for (b, row) in mask.iter().enumerate() {
        for (t, &real) in row.iter().enumerate() {
            if real {
                let at = (b * 10 + t) * vocab;
                assert_close(
                    &cached[at..at + vocab],
                    &full[at..at + vocab],
                    1e-5,
                    1e-5,
                    &format!("row {b} pos {t}"),
                );
            }
        }
    }
}

#[test]
fn seeded_sampling_is_reproducible_and_batch_independent() {
    let model = model::<B>(12);
    let sampling = SamplingConfig {
        max_new_tokens: 8,
        temperature: 0.9,
        top_p: 0.95,
        top_k: 50,
        seed: 7,
        ignore_eos: true,
        ..SamplingConfig::default()
    };
    let prompts = vec![vec![3, 4, 5], vec![9, 8, 7, 6, 5]];
    let a = generate_ids(&model, &prompts, &sampling, &[]).unwrap();
    let b = generate_ids(&model, &prompts, &sampling, &[]).unwrap();
    assert_eq!(a, b);
    assert!(a.iter().all(|g| g.token_ids.len() == 8));
    let other_seed = generate_ids(
        &model,
        &prompts,
        &SamplingConfig {
            seed: 8,
            ..sampling.clone()
        },
        &[],
    )
    .unwrap();
    assert_ne!(a, other_seed);
    // Alone in its batch, sequence 0 gets the same tokens (its own RNG stream, masks exact).
    let alone = generate_ids(&model, &prompts[..1], &sampling, &[]).unwrap();
    assert_eq!(alone[0].token_ids, a[0].token_ids);
}

#[test]
fn stop_ids_and_length_set_finish_reasons() {
    let model = model::<B>(13);
    let greedy = generate_ids(
        &model,
        &[vec![1, 2, 3]],
        &SamplingConfig {
            ignore_eos: true,
            ..SamplingConfig::greedy(6)
        },
        &[],
    )
    .unwrap();
    let first = greedy[0].token_ids[0];
    let stopped = generate_ids(
        &model,
        &[vec![1, 2, 3]],
        &SamplingConfig::greedy(6),
        &[first],
    )
    .unwrap();
    assert_eq!(stopped[0].token_ids, [first]);
    assert_eq!(stopped[0].finish_reason, agent_rl_core::FinishReason::Stop);
    assert_eq!(greedy[0].finish_reason, agent_rl_core::FinishReason::Length);
    let err = generate_ids(&model, &[vec![1; 500]], &SamplingConfig::greedy(100), &[]).unwrap_err();
    assert!(err.to_string().contains("max_position_embeddings"), "{err}");
}

#[test]
fn sampling_logprobs_equal_teacher_forced_scores() {
    let model = model::<B>(14);
    let sampling = SamplingConfig {
        max_new_tokens: 6,
        temperature: 0.7,
        seed: 3,
        ignore_eos: true,
        ..SamplingConfig::default()
    };
    let prompt = vec![10u32, 20, 30, 40];
    let generated = generate_ids(&model, std::slice::from_ref(&prompt), &sampling, &[])
        .unwrap()
        .remove(0);
    let full: Vec<u32> = prompt.iter().chain(&generated.token_ids).copied().collect();
    let scores = token_scores(
        &model,
        ids(std::slice::from_ref(&full)),
        &[vec![true; full.len()]],
        6,
        0.7,
    );
    let teacher = scores.logprobs.into_data().into_vec::<f32>().unwrap();
    assert_close(&teacher, &generated.logprobs, 1e-4, 1e-4, "logprobs");
    let alone = token_logprobs(
        &model,
        ids(std::slice::from_ref(&full)),
        &[vec![true; full.len()]],
        6,
        0.7,
    );
    assert_eq!(alone.into_data().into_vec::<f32>().unwrap(), teacher);
    let entropies = scores.entropies.into_data().into_vec::<f32>().unwrap();
    assert!(
        entropies
            .iter()
            .all(|&h| h > 0.0 && h <= (384f32).ln() + 1e-4)
    );
}

#[test]
fn teacher_forced_scores_are_differentiable_on_autodiff() {
    type A = Autodiff<B>;
    let model = model::<A>(15);
    let rows = [vec![5u32, 6, 7, 8, 9], vec![0, 1, 2, 3, 4]];
    let flat: Vec<i64> = rows.iter().flatten().map(|&i| i64::from(i)).collect();
    let input = Tensor::<A, 2, Int>::from_data(TensorData::new(flat, [2, 5]), &Default::default());
    let mask = vec![vec![true; 5], vec![false, true, true, true, true]];
    let scores = token_scores(&model, input, &mask, 3, 1.0);
    let grads = scores.logprobs.sum().backward();
    let embed = model
        .embed_tokens
        .weight
        .grad(&grads)
        .expect("embedding gradient");
    let q = model.layers[0]
        .self_attn
        .qkv_proj
        .weight
        .grad(&grads)
        .expect("qkv gradient");
    let norm_of = |t: Tensor<B, 2>| t.powi_scalar(2).sum().into_scalar();
    assert!(norm_of(embed) > 0.0 && norm_of(q) > 0.0);
}

#[test]
fn burn_policy_renders_generates_and_parses() {
    let tokenizer = Arc::new(ChatTokenizer::from_dir(&fixture("tied_f32")).unwrap());
    let mut policy = BurnPolicy::new(model::<B>(16), tokenizer.clone());
    let request = ChatRequest {
        messages: vec![Message::user("hello")],
        tools: Vec::new(),
    };
    let sampling = SamplingConfig {
        ignore_eos: true,
        ..SamplingConfig::greedy(5)
    };
    let completion = policy
        .generate(&[request.clone(), request], &sampling)
        .unwrap();
    assert_eq!(completion[0], completion[1]);
    assert_eq!(completion[0].token_ids.len(), 5);
    assert_eq!(
        completion[0].text,
        tokenizer.decode(&completion[0].token_ids, true).unwrap()
    );
}

#[test]
fn repeated_prompts_decode_as_in_a_batch_without_repeats() {
    let model = model::<B>(16);
    let sampling = SamplingConfig {
        max_new_tokens: 6,
        temperature: 1.0,
        seed: 5,
        ignore_eos: true,
        ..SamplingConfig::default()
    };
    let (p, q, r) = (vec![3u32, 4, 5, 6], vec![9u32, 8], vec![7u32, 7, 1]);
    // Rows 0 and 1 share a prompt: it is prefilled once and fanned out through the cache.
    let shared = generate_ids(&model, &[p.clone(), p.clone(), q.clone()], &sampling, &[]).unwrap();
    let first = generate_ids(&model, &[p.clone(), r.clone(), q.clone()], &sampling, &[]).unwrap();
    let second = generate_ids(&model, &[r, p.clone(), q.clone()], &sampling, &[]).unwrap();
    assert_eq!(shared[0], first[0]);
    // Two shards on two threads: rows {0, 1} (one prompt) and {2}.
    let sharded = generate_ids(
        &model,
        &[p.clone(), p.clone(), q.clone()],
        &SamplingConfig {
            decode_shards: 2,
            ..sampling.clone()
        },
        &[],
    )
    .unwrap();
    // Same tokens; log-probabilities to the last bits (a shard is a smaller matrix product).
    for (a, b) in sharded.iter().zip(&shared) {
        assert_eq!(
            (&a.token_ids, a.finish_reason),
            (&b.token_ids, b.finish_reason)
        );
        assert_close(&a.logprobs, &b.logprobs, 1e-5, 1e-5, "sharded logprobs");
    }
    assert_eq!(shared[1], second[1]);
    assert_eq!(shared[2], first[2]);
    assert_ne!(shared[0].token_ids, shared[1].token_ids);
}

#[test]
fn shared_prompt_scores_and_gradients_equal_separate_rows() {
    type A = Autodiff<B>;
    let model = model::<A>(17);
    let device = Default::default();
    // [left-padded prompt | right-padded completion]; rows 0, 1 and 3 share their prompt.
    let rows = [
        vec![0u32, 11, 12, 13, 21, 22, 23],
        vec![0, 11, 12, 13, 24, 25, 0],
        vec![14, 15, 16, 17, 26, 27, 28],
        vec![0, 11, 12, 13, 29, 30, 31],
    ];
    let mask: Vec<Vec<bool>> = rows
        .iter()
        .enumerate()
        .map(|(row, ids)| {
            (0..ids.len())
                .map(|col| {
                    let left_pad = col == 0 && row != 2;
                    let right_pad = row == 1 && col == 6;
                    !(left_pad || right_pad)
                })
                .collect()
        })
        .collect();
    let weights = [0.3f32, -1.2, 0.7, 2.0];
    let tensor = |rows: &[Vec<u32>]| {
        let flat: Vec<i64> = rows.iter().flatten().map(|&i| i64::from(i)).collect();
        Tensor::<A, 2, Int>::from_data(TensorData::new(flat, [rows.len(), rows[0].len()]), &device)
    };
    let weight_of = |values: &[f32]| {
        Tensor::<A, 2>::from_data(TensorData::new(values.to_vec(), [values.len(), 1]), &device)
    };
    let valid = |row: usize| {
        Tensor::<A, 2>::from_data(
            TensorData::new(
                mask[row][4..]
                    .iter()
                    .map(|&m| f32::from(u8::from(m)))
                    .collect::<Vec<_>>(),
                [1, 3],
            ),
            &device,
        )
    };
    let grads_of =
        |grads: &<A as burn::tensor::backend::AutodiffBackend>::Gradients| -> Vec<Vec<f32>> {
            vec![
                model
                    .embed_tokens
                    .weight
                    .grad(grads)
                    .unwrap()
                    .into_data()
                    .into_vec()
                    .unwrap(),
                model.layers[1]
                    .self_attn
                    .qkv_proj
                    .weight
                    .grad(grads)
                    .unwrap()
                    .into_data()
                    .into_vec()
                    .unwrap(),
                model.layers[0]
                    .mlp
                    .gate_up_proj
                    .weight
                    .grad(grads)
                    .unwrap()
                    .into_data()
                    .into_vec()
                    .unwrap(),
            ]
        };
    let shared = token_scores(&model, tensor(&rows), &mask, 3, 0.8);
    let valid_all = Tensor::cat((0..4).map(valid).collect(), 0);
    let shared_logprobs = (shared.logprobs.clone() * valid_all.clone())
        .into_data()
        .into_vec::<f32>()
        .unwrap();
    let shared_grads = grads_of(
        &(shared.logprobs * valid_all * weight_of(&weights))
            .sum()
            .backward(),
    );
    let mut separate_logprobs = Vec::new();
    let mut separate_grads: Option<Vec<Vec<f32>>> = None;
    for (row, ids) in rows.iter().enumerate() {
        let alone = token_scores(
            &model,
            tensor(std::slice::from_ref(ids)),
            &mask[row..=row],
            3,
            0.8,
        );
        let logprobs = alone.logprobs * valid(row);
        separate_logprobs.extend(logprobs.clone().into_data().into_vec::<f32>().unwrap());
        let grads = grads_of(&(logprobs * weight_of(&weights[row..=row])).sum().backward());
        separate_grads = Some(match separate_grads {
            None => grads,
            Some(sum) => sum
                .iter()
                .zip(&grads)
                .map(|(a, b)| a.iter().zip(b).map(|(x, y)| x + y).collect())
                .collect(),
        });
    }
    assert_close(&shared_logprobs, &separate_logprobs, 1e-5, 1e-5, "logprobs");
    for (name, (shared, separate)) in ["embed", "qkv", "gate_up"]
        .iter()
        .zip(shared_grads.iter().zip(&separate_grads.unwrap()))
    {
        assert_close(shared, separate, 1e-4, 1e-5, name);
    }
}

#[test]
fn long_batched_sampling_with_finished_rows_matches_teacher_forced_scores() {
    // Prompts of several lengths (left padding), two equal ones (shared prefill), rows that stop
    // early (the cache drops them) and enough tokens that the cache grows more than once.
    let model = model::<B>(21);
    let prompts = vec![
        vec![10u32, 20, 30],
        vec![11, 21, 31, 41, 51, 61, 71],
        vec![10, 20, 30],
        vec![12, 22],
    ];
    let sampling = SamplingConfig {
        max_new_tokens: 40,
        temperature: 1.0,
        seed: 5,
        ..SamplingConfig::default()
    };
    let stops = [7u32, 8, 9];
    let generated = generate_ids(&model, &prompts, &sampling, &stops).unwrap();
    assert!(
        generated.iter().any(|g| g.token_ids.len() < 40),
        "some row stops early"
    );
    for (prompt, generation) in prompts.iter().zip(&generated) {
        let count = generation.token_ids.len();
        let full: Vec<u32> = prompt
            .iter()
            .chain(&generation.token_ids)
            .copied()
            .collect();
        let scores = token_scores(
            &model,
            ids(std::slice::from_ref(&full)),
            &[vec![true; full.len()]],
            count,
            1.0,
        );
        let teacher = scores.logprobs.into_data().into_vec::<f32>().unwrap();
        assert_close(&teacher, &generation.logprobs, 1e-4, 1e-4, "logprobs");
    }
}
