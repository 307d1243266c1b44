//! Untrusted token ids and mismatched tokenizers give errors naming what was wrong, never a
//! panic inside a tensor op.

use agent_rl_core::generation::{SamplingConfig, check_token_ids, generate_ids};
use agent_rl_core::weights::random_model;
use agent_rl_core::{ChatTokenizer, CoreError, Qwen2Config, Qwen2ForCausalLm};

use crate::common::{B, fixture};

fn model(vocab_size: usize) -> Qwen2ForCausalLm<B> {
    let config = Qwen2Config {
        vocab_size,
        ..Qwen2Config::tiny()
    };
    random_model(&config, 1, 0.3, &Default::default()).unwrap()
}

fn greedy(max_new_tokens: usize) -> SamplingConfig {
    SamplingConfig {
        max_new_tokens,
        temperature: 0.0,
        ..SamplingConfig::default()
    }
}

#[test]
fn generate_refuses_ids_outside_the_vocabulary() {
    let model = model(384);
    // 99999 is past the embedding; u32::MAX does not even fit the backends' i32 ids.
    for bad in [384, 99_999, u32::MAX] {
        let prompts = vec![vec![1, 2, 3], vec![1, 2, bad]];
        match generate_ids(&model, &prompts, &greedy(2), &[]) {
            Err(err @ CoreError::InvalidArgument { .. }) => {
                let text = err.to_string();
                assert!(
                    text.contains(&bad.to_string())
                        && text.contains("384")
                        && text.contains("row 1"),
                    "{text}"
                );
            }
            other => panic!("id {bad}: expected InvalidArgument, got {other:?}"),
        }
    }
    // The largest valid id still generates.
    let out = generate_ids(&model, &[vec![383, 0]], &greedy(2), &[]).unwrap();
    assert_eq!(out[0].token_ids.len(), 2);
}

#[test]
fn check_token_ids_names_field_row_and_position() {
    assert!(check_token_ids(&[vec![0, 9], vec![]], 10, "ids").is_ok());
    let err = check_token_ids(&[vec![0, 9], vec![3, 4, 10]], 10, "--ids").unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("`--ids`") && text.contains("row 1, position 2") && text.contains("10"),
        "{text}"
    );
}

#[test]
fn tokenizer_larger_than_the_embedding_is_refused_with_both_sizes() {
    let tokenizer = ChatTokenizer::from_dir(&fixture("tied_f32")).unwrap();
    assert_eq!(tokenizer.id_bound(), 384);
    tokenizer.check_model_vocab(384).unwrap();
    // A padded embedding (as Qwen2.5's) is fine.
    tokenizer.check_model_vocab(512).unwrap();
    match tokenizer.check_model_vocab(256) {
        Err(err @ CoreError::VocabularyMismatch { .. }) => {
            let text = err.to_string();
            assert!(
                text.contains("384") && text.contains("256") && text.contains("tokenizer.json"),
                "{text}"
            );
        }
        other => panic!("expected VocabularyMismatch, got {other:?}"),
    }
}
