//! The planner's formulas on a shape small enough to count by hand, and the 7B plans the
//! issue names.

use agent_rl_core::Qwen2Config;

use super::{
    LoraPlan, MemoryBreakdown, MemoryPlanRequest, TargetModule, TrainMethod, WeightDtype,
    parse_bytes, plan_memory, preset,
};

/// H 4, I 8, 2 layers, 2 heads of width 2, 1 KV head, vocab 10, tied: per layer q 16, k 8,
/// v 8, o 16, gate/up/down 32 each, biases 8, norms 8 = 160; 10 × 4 + 2 × 160 + 4 = 364.
fn hand_model() -> Qwen2Config {
    Qwen2Config {
        vocab_size: 10,
        hidden_size: 4,
        intermediate_size: 8,
        num_hidden_layers: 2,
        num_attention_heads: 2,
        num_key_value_heads: Some(1),
        tie_word_embeddings: true,
        ..Qwen2Config::tiny()
    }
}

fn sft_request() -> MemoryPlanRequest {
    MemoryPlanRequest {
        method: TrainMethod::Sft,
        batch_size: 1,
        max_prompt_length: 1,
        max_completion_length: 2,
        ..MemoryPlanRequest::new(hand_model())
    }
}

#[test]
fn sft_components_counted_by_hand() {
    let plan = plan_memory(&sft_request()).expect("plan");
    assert_eq!(plan.parameters, 364);
    // One pass of 3 tokens attending to 3 positions. Per layer: 3 × (6·4 + 3·8 + 2 heads · 3)
    // + 3 positions × (2 · 1 · 2) = 162 + 12 = 174 values; final norm and head 2 · 4 · 3 = 24;
    // backward working set: the MLP phase 3 × (4 + 2·8) = 60 beats the attention phase
    // 3 × (2·2·3 + 2·4) − 3 × 3·8 < 0. (2 · 174 + 24 + 60) × 4 bytes = 1728.
    let expected = MemoryBreakdown {
        weights: 364 * 4,
        gradients: 364 * 4,
        optimizer: 2 * 364 * 4,
        reference: 0,
        activations: 1728,
        logits: 3 * 3 * 10 * 4,
        rollout_kv_cache: 0,
    };
    assert_eq!(plan.breakdown, expected);
    // Backward start: activations, logits and the embedding's gradient (10 × 4 × 4 bytes) beside
    // weights and moments; it beats the backward end (all gradients, 1456, plus a new weight and
    // two moments of the largest tensor, the 10 × 4 embedding: 480).
    assert_eq!(plan.total_bytes, 1456 + 2912 + (1728 + 360 + 160));
    assert_eq!(
        (plan.micro_batch_size, plan.gradient_accumulation_steps),
        (1, 1)
    );
    assert_eq!(plan.fits, None);
}

#[test]
fn checkpointing_keeps_layer_inputs_and_one_layer() {
    let request = MemoryPlanRequest {
        gradient_checkpointing: true,
        ..sft_request()
    };
    let plan = plan_memory(&request).expect("plan");
    // 2 layers × 3 tokens × H 4 inputs and the head's 24 kept; in the backward pass one layer's
    // 174, the pass's mask 3 × 2 heads × 3 = 18 kept for the recomputations, and the working
    // set 60 as before.
    assert_eq!(
        plan.breakdown.activations,
        (2 * 12 + 24 + 174 + 18 + 60) * 4
    );
}

#[test]
fn grpo_shares_the_prompt_and_keeps_a_reference_without_lora() {
    let request = MemoryPlanRequest {
        method: TrainMethod::Grpo,
        prompts_per_step: 1,
        num_generations: 2,
        max_prompt_length: 2,
        max_completion_length: 3,
        gradient_accumulation_steps: Some(1),
        ..MemoryPlanRequest::new(hand_model())
    };
    let plan = plan_memory(&request).expect("plan");
    let breakdown = plan.breakdown;
    // Prompt pass: 1 row × 2 tokens → 2 × (48 + 2·2) + 2 × 4 = 112; completion pass: 2 rows × 2
    // new tokens attending to 4 → 4 × (48 + 2·4) + 2 × 4 × 4 = 256; head 2 · 4 · (2 + 4) = 48.
    // Backward working set of the larger pass: 4 × (4 + 2·8) = 80. The reference scoring the
    // completion pass beside the policy's forward: 4 × (4·4 + 3·8) = 160, its mask 4 × 2 × 4 = 32,
    // 2 layers' keys and values 2 × 2 × 4 × 4 = 64, and the policy pass's mask 32: 288 > 80.
    assert_eq!(breakdown.activations, (2 * 368 + 48 + 288) * 4);
    assert_eq!(breakdown.logits, 2 * 2 * 3 * 10 * 4);
    assert_eq!(breakdown.reference, 364 * 4);
    // 2 layers × 2 sequences × 5 positions × (2 · 1 · 2) + 2 rows of logits.
    assert_eq!(breakdown.rollout_kv_cache, (2 * 2 * 5 * 4 + 2 * 10) * 4);
    let without_kl = MemoryPlanRequest {
        beta: 0.0,
        ..request
    };
    let plan = plan_memory(&without_kl).expect("plan");
    assert_eq!(plan.breakdown.reference, 0);
    // No reference scoring: the backward working set is the larger moment.
    assert_eq!(plan.breakdown.activations, (2 * 368 + 48 + 80) * 4);
}

#[test]
fn lora_trains_adapters_only_and_needs_no_reference_copy() {
    let request = MemoryPlanRequest {
        lora: Some(LoraPlan {
            r: 2,
            target_modules: vec![TargetModule::Q, TargetModule::V],
        }),
        weight_dtype: WeightDtype::Bf16,
        ..MemoryPlanRequest::new(hand_model())
    };
    let plan = plan_memory(&request).expect("plan");
    // q: 2 × (4 + 4), v: 2 × (4 + 2), per layer 28, 2 layers.
    assert_eq!(plan.trainable_parameters, 56);
    assert_eq!(plan.breakdown.weights, 364 * 2 + 56 * 4);
    assert_eq!(plan.breakdown.gradients, 56 * 4);
    assert_eq!(plan.breakdown.optimizer, 2 * 56 * 4);
    assert_eq!(plan.breakdown.reference, 0);
}

#[test]
fn grpo_with_checkpointing_runs_every_prompt_in_full() {
    let request = MemoryPlanRequest {
        method: TrainMethod::Grpo,
        prompts_per_step: 1,
        num_generations: 2,
        max_prompt_length: 2,
        max_completion_length: 3,
        gradient_accumulation_steps: Some(1),
        gradient_checkpointing: true,
        ..MemoryPlanRequest::new(hand_model())
    };
    let plan = plan_memory(&request).expect("plan");
    // One pass of 2 rows × 4 tokens attending to 4 (no shared prompt, as
    // `token_scores_checkpointed` runs it): 2 layers × 8 tokens × H 4 inputs = 64 and the head
    // 2 · 4 · 8 = 64 kept; in the backward pass one layer 8 × (48 + 2·4) + 2 × 4 × 4 = 480, the
    // pass's mask 8 × 2 × 4 = 64, the working set 8 × (4 + 2·8) = 160. The reference scoring
    // (shared prompt, 256 as without checkpointing, plus this pass's mask 64) is smaller.
    assert_eq!(plan.breakdown.activations, (64 + 64 + 480 + 64 + 160) * 4);
}

#[test]
fn qwen_7b_lora_grpo_fits_80gb_and_full_f32_does_not() {
    let model = preset("qwen2.5-7b").expect("preset");
    let lora = MemoryPlanRequest {
        method: TrainMethod::Grpo,
        lora: Some(LoraPlan::all_linear(64)),
        prompts_per_step: 8,
        num_generations: 8,
        max_prompt_length: 512,
        max_completion_length: 1024,
        weight_dtype: WeightDtype::Bf16,
        gradient_checkpointing: true,
        device_memory: Some(parse_bytes("80GB").expect("size")),
        ..MemoryPlanRequest::new(model.clone())
    };
    let plan = plan_memory(&lora).expect("plan");
    assert_eq!(plan.fits, Some(true), "{plan:#?}");
    assert_eq!(plan.breakdown.reference, 0);
    // bf16 base: 7.62e9 × 2 bytes, plus 161.5 M adapter parameters in f32.
    assert_eq!(plan.breakdown.weights, 7_615_616_512 * 2 + 161_480_704 * 4);
    let full = MemoryPlanRequest {
        lora: None,
        weight_dtype: WeightDtype::F32,
        gradient_checkpointing: false,
        ..lora
    };
    let plan = plan_memory(&full).expect("plan");
    assert_eq!(plan.fits, Some(false));
    // Weights, gradients, two moments and the reference: 5 × 30.5 GB before any activation.
    assert!(plan.total_bytes > 5 * 7_615_616_512 * 4, "{plan:#?}");
    // Nothing fits, so the plan falls back to one sequence per micro-batch.
    assert_eq!(plan.micro_batch_size, 1);
}

#[test]
fn micro_batches_are_chosen_to_fit_when_left_open() {
    let request = MemoryPlanRequest {
        lora: Some(LoraPlan::all_linear(16)),
        weight_dtype: WeightDtype::Bf16,
        gradient_checkpointing: true,
        ..MemoryPlanRequest::new(preset("qwen2.5-1.5b").expect("preset"))
    };
    let whole = plan_memory(&MemoryPlanRequest {
        gradient_accumulation_steps: Some(1),
        ..request.clone()
    })
    .expect("plan");
    let budget = whole.total_bytes / 2;
    let chosen = plan_memory(&MemoryPlanRequest {
        device_memory: Some(budget),
        ..request
    })
    .expect("plan");
    assert_eq!(chosen.fits, Some(true));
    assert!(chosen.gradient_accumulation_steps > 1);
    assert!(chosen.total_bytes <= budget && chosen.micro_batch_size < 64);
}

#[test]
fn bad_requests_name_the_field() {
    let cases = [
        (
            MemoryPlanRequest {
                lora: Some(LoraPlan::all_linear(0)),
                ..sft_request()
            },
            "lora.r",
        ),
        (
            MemoryPlanRequest {
                num_generations: 0,
                ..sft_request()
            },
            "num_generations",
        ),
        (
            MemoryPlanRequest {
                beta: -1.0,
                ..sft_request()
            },
            "beta",
        ),
    ];
    for (request, field) in cases {
        let error = plan_memory(&request).expect_err(field).to_string();
        assert!(error.contains(field), "{error}");
    }
    let error = TargetModule::parse_list("q,attn")
        .expect_err("unknown")
        .to_string();
    assert!(
        error.contains("lora.target_modules") && error.contains("attn"),
        "{error}"
    );
    assert_eq!(
        TargetModule::parse_list("q_proj, v").expect("parses"),
        vec![TargetModule::Q, TargetModule::V]
    );
    let error = WeightDtype::parse("int8").expect_err("unknown").to_string();
    assert!(error.contains("weight_dtype"), "{error}");
}

/// K = prompts = 2^32: the sequence count overflowed `usize` and the plan reported a fit.
#[test]
fn sizes_whose_products_overflow_are_refused_naming_the_field() {
    let huge = 1usize << 32;
    let request = MemoryPlanRequest {
        prompts_per_step: huge,
        num_generations: huge,
        device_memory: Some(parse_bytes("80GB").expect("bytes")),
        ..MemoryPlanRequest::new(preset("qwen2.5-7b").expect("preset"))
    };
    let error = plan_memory(&request)
        .expect_err("too many sequences")
        .to_string();
    assert!(
        error.contains("prompts_per_step × num_generations"),
        "{error}"
    );
    let long = MemoryPlanRequest {
        max_completion_length: usize::MAX,
        ..MemoryPlanRequest::new(hand_model())
    };
    let error = plan_memory(&long).expect_err("too long").to_string();
    assert!(error.contains("max_completion_length"), "{error}");
}

/// K = prompts = 100,000 ran the accumulation search over every count (over 11 minutes): such
/// a request is refused, and at the largest request accepted the search tries only the
/// distinct micro-batch sizes.
#[test]
fn the_largest_accepted_request_plans_promptly() {
    let over = MemoryPlanRequest {
        prompts_per_step: 100_000,
        num_generations: 100_000,
        ..MemoryPlanRequest::new(hand_model())
    };
    let error = plan_memory(&over).expect_err("above the limit").to_string();
    assert!(
        error.contains("prompts_per_step × num_generations"),
        "{error}"
    );
    let request = MemoryPlanRequest {
        prompts_per_step: 1 << 12,
        num_generations: 1 << 12,
        device_memory: Some(1),
        ..MemoryPlanRequest::new(hand_model())
    };
    let started = std::time::Instant::now();
    let plan = plan_memory(&request).expect("plan");
    assert_eq!(plan.fits, Some(false));
    assert_eq!(plan.gradient_accumulation_steps, 1 << 24);
    // a bounded liveness check with a wide margin (about 8,000 estimates)
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

/// The distinct-size search picks what trying every count would.
#[test]
fn the_search_matches_trying_every_count() {
    for memory in [1u64, 10_000, 20_000, 40_000, 80_000, u64::MAX] {
        let request = MemoryPlanRequest {
            prompts_per_step: 7,
            num_generations: 5,
            device_memory: Some(memory),
            ..MemoryPlanRequest::new(hand_model())
        };
        let chosen = plan_memory(&request)
            .expect("plan")
            .gradient_accumulation_steps;
        let every = (1..=35)
            .find(|&steps| {
                let fixed = MemoryPlanRequest {
                    gradient_accumulation_steps: Some(steps),
                    ..request.clone()
                };
                plan_memory(&fixed).expect("plan").total_bytes <= memory
            })
            .unwrap_or(35);
        assert_eq!(chosen, every, "device memory {memory}");
    }
}
