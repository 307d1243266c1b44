//! Logits and greedy continuations equal transformers' on the committed tiny checkpoints (Qwen2 in
//! `fixtures/qwen2_tiny`, Llama in `fixtures/llama_tiny`).

use agent_rl_core::Qwen2ForCausalLm;
use agent_rl_core::generation::{SamplingConfig, generate_ids};
use agent_rl_core::weights::{LoadOptions, load_pretrained};

use crate::common::{B, assert_close, expected_in, expected_tensor_in, fixture_in, ids};

fn load(set: &str, name: &str) -> Qwen2ForCausalLm<B> {
    load_pretrained::<B>(
        &fixture_in(set, name),
        LoadOptions::default(),
        &Default::default(),
    )
    .unwrap()
    .0
}

fn check_model(dir: &str, reference: &str) {
    check_model_in("qwen2_tiny", dir, reference);
}

fn check_model_in(set: &str, dir: &str, reference: &str) {
    let model = load(set, dir);
    let expected_json = expected_in(set);
    let prompt = ids(&expected_json["prompt_ids"]);
    let logits = model.forward_ids(std::slice::from_ref(&prompt), None);
    let (shape, want) = expected_tensor_in(set, reference, "logits");
    assert_eq!(logits.dims().to_vec(), [1, shape[0], shape[1]]);
    let got = logits.into_data().into_vec::<f32>().unwrap();
    assert_close(&got, &want, 1e-4, 1e-4, &format!("{dir} logits"));

    // Left-padded batch: compare the real positions only.
    let rows: Vec<Vec<u32>> = expected_json["batch_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(ids)
        .collect();
    let width = rows.iter().map(Vec::len).max().unwrap();
    let padded: Vec<Vec<u32>> = rows
        .iter()
        .map(|r| {
            std::iter::repeat_n(0, width - r.len())
                .chain(r.iter().copied())
                .collect()
        })
        .collect();
    let mask: Vec<Vec<bool>> = rows
        .iter()
        .map(|r| (0..width).map(|i| i >= width - r.len()).collect())
        .collect();
    let batch_logits = model
        .forward_ids(&padded, Some(&mask))
        .into_data()
        .into_vec::<f32>()
        .unwrap();
    let (_, want) = expected_tensor_in(set, reference, "batch_logits");
    let vocab = model.config().vocab_size;
    for (b, row_mask) in mask.iter().enumerate() {
        for (t, &keep) in row_mask.iter().enumerate() {
            if keep {
                let at = (b * width + t) * vocab;
                assert_close(
                    &batch_logits[at..at + vocab],
                    &want[at..at + vocab],
                    1e-4,
                    1e-4,
                    &format!("{dir} batch {b} pos {t}"),
                );
            }
        }
    }

    // Greedy continuation of the padded batch, with the KV cache.
    let greedy = generate_ids(
        &model,
        &rows,
        &SamplingConfig {
            ignore_eos: true,
            ..SamplingConfig::greedy(12)
        },
        &[],
    )
    .unwrap();
    let want: Vec<Vec<u32>> = expected_json["models"][reference]["greedy_batch"]
        .as_array()
        .unwrap()
        .iter()
        .map(ids)
        .collect();
    let got: Vec<Vec<u32>> = greedy.into_iter().map(|g| g.token_ids).collect();
    assert_eq!(got, want, "{dir} greedy ids");
}

#[test]
fn tied_f32_matches_transformers() {
    check_model("tied_f32", "tied_f32");
}

#[test]
fn untied_f32_matches_transformers() {
    check_model("untied_f32", "untied_f32");
}

#[test]
fn sharded_checkpoint_matches_its_single_file_twin() {
    check_model("sharded_f32", "untied_f32");
}

#[test]
fn bf16_storage_matches_transformers() {
    check_model("untied_bf16", "untied_bf16");
}

#[test]
fn llama_tied_without_biases_matches_transformers() {
    check_model_in("llama_tiny", "tied_plain", "tied_plain");
}

#[test]
fn llama_untied_with_biases_and_llama3_rope_matches_transformers() {
    check_model_in("llama_tiny", "untied_biased", "untied_biased");
}

#[test]
fn llama_config_in_the_transformers_4_layout_matches_transformers() {
    check_model_in("llama_tiny", "untied_biased_v4", "untied_biased");
}
