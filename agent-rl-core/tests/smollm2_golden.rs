//! SmolLM2-135M-Instruct (a real pretrained Llama model) reproduces transformers on the f32
//! weights `scripts/get_smollm2.sh` dequantizes: chat template byte for byte, token ids,
//! per-position logsumexp and next-token log-probs within 2e-3, greedy tokens wherever the
//! reference's top-1/top-2 margin exceeds 1e-3. Reference values: `fixtures/smollm2/expected.json`
//! (made by `fixtures/smollm2/make_fixture.py`). The model is not committed: the test needs
//! `AGENT_RL_SMOLLM2=<dir>` and fails without it when asked to run.

use std::path::PathBuf;

use agent_rl_core::generation::{SamplingConfig, generate_ids};
use agent_rl_core::weights::{LoadOptions, load_pretrained};
use agent_rl_core::{ChatTokenizer, Message};
use serde_json::Value;

use crate::common::{B, fixture_in, ids};

const TOLERANCE: f64 = 2e-3;
const MARGIN: f64 = 1e-3;

fn model_dir() -> PathBuf {
    match std::env::var_os("AGENT_RL_SMOLLM2") {
        Some(dir) => PathBuf::from(dir),
        None => panic!(
            "AGENT_RL_SMOLLM2 is not set: run `scripts/get_smollm2.sh DIR` and set \
             AGENT_RL_SMOLLM2=DIR to run this test"
        ),
    }
}

fn floats(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

#[test]
#[ignore = "needs the SmolLM2 model: scripts/get_smollm2.sh DIR, then AGENT_RL_SMOLLM2=DIR"]
fn smollm2_matches_transformers() {
    let dir = model_dir();
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture_in("smollm2", "expected.json")).unwrap(),
    )
    .unwrap();
    let tokenizer = ChatTokenizer::from_dir(&dir).unwrap();
    let (model, _) = load_pretrained::<B>(&dir, LoadOptions::default(), &Default::default())
        .unwrap_or_else(|err| panic!("loading {}: {err}", dir.display()));
    let vocab = model.config().vocab_size;
    let new_tokens = expected["new_tokens"].as_u64().unwrap() as usize;
    for case in expected["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let messages: Vec<Message> = serde_json::from_value(case["messages"].clone()).unwrap();
        for (add, key) in [
            (false, "without_generation_prompt"),
            (true, "with_generation_prompt"),
        ] {
            let text = tokenizer.apply_chat_template(&messages, &[], add).unwrap();
            assert_eq!(
                text,
                case["templates"][key].as_str().unwrap(),
                "{name}: {key}"
            );
        }
        let prompt_text = case["templates"]["with_generation_prompt"]
            .as_str()
            .unwrap();
        let prompt = ids(&case["prompt_ids"]);
        assert_eq!(
            tokenizer.encode(prompt_text).unwrap(),
            prompt,
            "{name}: ids"
        );

        // Greedy tokens: equal up to the first step whose reference margin is a near tie.
        let greedy = generate_ids(
            &model,
            std::slice::from_ref(&prompt),
            &SamplingConfig {
                ignore_eos: true,
                ..SamplingConfig::greedy(new_tokens)
            },
            &[],
        )
        .unwrap();
        let got = &greedy[0].token_ids;
        let want = ids(&case["greedy"]);
        let margins = floats(&case["greedy_margins"]);
        let mut compared = 0;
        for (step, (&margin, (&mine, &theirs))) in
            margins.iter().zip(got.iter().zip(&want)).enumerate()
        {
            if margin <= MARGIN {
                break;
            }
            assert_eq!(
                mine, theirs,
                "{name}: greedy token {step} (margin {margin})"
            );
            compared += 1;
        }
        assert!(compared > 0, "{name}: no greedy token compared");

        // Teacher-forced over prompt + the reference continuation.
        let full: Vec<u32> = prompt.iter().chain(&want).copied().collect();
        let logits = model
            .forward_ids(std::slice::from_ref(&full), None)
            .into_data()
            .into_vec::<f32>()
            .unwrap();
        let want_lse = floats(&case["logsumexp"]);
        let want_next = floats(&case["next_token_logprobs"]);
        assert_eq!(want_lse.len(), full.len(), "{name}: positions");
        for (t, row) in logits.chunks_exact(vocab).enumerate() {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let sum: f64 = row.iter().map(|&v| f64::from(v - max).exp()).sum();
            let lse = sum.ln() + f64::from(max);
            assert!(
                (lse - want_lse[t]).abs() <= TOLERANCE,
                "{name}: logsumexp at {t}: {lse} vs {}",
                want_lse[t]
            );
            if let Some(&next) = full.get(t + 1) {
                let logprob = f64::from(row[next as usize]) - lse;
                assert!(
                    (logprob - want_next[t]).abs() <= TOLERANCE,
                    "{name}: next-token logprob at {t}: {logprob} vs {}",
                    want_next[t]
                );
            }
        }
    }
}
