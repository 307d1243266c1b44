//! Config defaults, serde round trips and `validate()` messages.

use agent_rl_algos::{
    AdvantageScaling, AlgoError, GrpoConfig, ImportanceSamplingLevel, KlEstimator, LossType,
    LrSchedule, SftConfig,
};

fn field_of(result: Result<(), AlgoError>) -> String {
    match result {
        Err(AlgoError::InvalidConfig { field, reason }) => {
            assert!(!reason.is_empty());
            field
        }
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
}

#[test]
fn defaults_are_valid_and_follow_trl() {
    let c = GrpoConfig::default();
    c.validate().expect("default GRPO config is valid");
    assert_eq!(
        (c.num_generations, c.loss_type, c.beta, c.epsilon),
        (8, LossType::Dapo, 0.0, 0.2)
    );
    assert_eq!(c.scale_rewards, AdvantageScaling::Group);
    assert_eq!(c.optimizer.adam_epsilon, 1e-8);
    assert!(!c.needs_reference_model());
    SftConfig::default()
        .validate()
        .expect("default SFT config is valid");
    assert_eq!(SftConfig::default().optimizer.learning_rate, 2e-5);
}

#[test]
fn json_round_trip_partial_and_unknown_fields() {
    let c = GrpoConfig {
        beta: 0.04,
        delta: Some(1.5),
        ..GrpoConfig::default()
    }
    .with_max_completion_length(64);
    let json = serde_json::to_string(&c).expect("serialises");
    assert_eq!(
        serde_json::from_str::<GrpoConfig>(&json).expect("parses"),
        c
    );

    let partial: GrpoConfig = serde_json::from_str(
        r#"{"loss_type": "dr_grpo", "importance_sampling_level": "sequence", "kl_estimator": "k2",
            "scale_rewards": "none", "optimizer": {"lr_scheduler_type": "cosine"}}"#,
    )
    .expect("parses");
    assert_eq!(partial.loss_type, LossType::DrGrpo);
    assert_eq!(
        partial.importance_sampling_level,
        ImportanceSamplingLevel::Sequence
    );
    assert_eq!(partial.kl_estimator, KlEstimator::K2);
    assert_eq!(partial.scale_rewards, AdvantageScaling::None);
    assert_eq!(partial.optimizer.lr_scheduler_type, LrSchedule::Cosine);
    assert_eq!(
        partial.num_generations, 8,
        "unspecified fields keep defaults"
    );

    let err =
        serde_json::from_str::<GrpoConfig>(r#"{"group_size": 4}"#).expect_err("unknown field");
    assert!(err.to_string().contains("group_size"), "{err}");
    assert!(serde_json::from_str::<GrpoConfig>(r#"{"loss_type": "ppo"}"#).is_err());
    assert!(serde_json::from_str::<SftConfig>(r#"{"packing": true, "lr": 1}"#).is_err());
}

#[test]
fn validate_names_the_field() {
    let d = GrpoConfig::default;
    assert_eq!(
        field_of(
            GrpoConfig {
                num_generations: 1,
                ..d()
            }
            .validate()
        ),
        "num_generations"
    );
    assert_eq!(
        field_of(GrpoConfig { beta: -0.1, ..d() }.validate()),
        "beta"
    );
    assert_eq!(
        field_of(
            GrpoConfig {
                epsilon: 1.5,
                ..d()
            }
            .validate()
        ),
        "epsilon"
    );
    assert_eq!(
        field_of(
            GrpoConfig {
                epsilon_high: Some(0.0),
                ..d()
            }
            .validate()
        ),
        "epsilon_high"
    );
    assert_eq!(
        field_of(
            GrpoConfig {
                delta: Some(0.9),
                ..d()
            }
            .validate()
        ),
        "delta"
    );
    assert_eq!(
        field_of(
            GrpoConfig {
                num_iterations: 0,
                ..d()
            }
            .validate()
        ),
        "num_iterations"
    );
    assert_eq!(
        field_of(
            GrpoConfig {
                max_completion_length: 64,
                ..d()
            }
            .validate()
        ),
        "sampling.max_new_tokens"
    );
    assert_eq!(
        field_of(
            GrpoConfig {
                sync_ref_model: true,
                ..d()
            }
            .validate()
        ),
        "sync_ref_model"
    );
    assert_eq!(
        field_of(
            GrpoConfig {
                reward_weights: vec![1.0, f32::NAN],
                ..d()
            }
            .validate()
        ),
        "reward_weights[1]"
    );
    let mut c = d();
    c.sampling.top_p = 0.0;
    assert_eq!(field_of(c.validate()), "sampling.top_p");
    let mut c = d();
    c.sampling.temperature = 0.0;
    assert_eq!(field_of(c.validate()), "sampling.temperature");
    let mut c = d();
    c.optimizer.learning_rate = 0.0;
    assert_eq!(field_of(c.validate()), "optimizer.learning_rate");
    let mut c = d();
    c.optimizer.max_grad_norm = Some(-1.0);
    assert_eq!(field_of(c.validate()), "optimizer.max_grad_norm");

    let s = SftConfig::default;
    assert_eq!(
        field_of(
            SftConfig {
                eval_fraction: 1.0,
                ..s()
            }
            .validate()
        ),
        "eval_fraction"
    );
    assert_eq!(
        field_of(
            SftConfig {
                batch_size: 0,
                ..s()
            }
            .validate()
        ),
        "batch_size"
    );
    assert_eq!(
        field_of(
            SftConfig {
                num_train_epochs: 0,
                ..s()
            }
            .validate()
        ),
        "num_train_epochs"
    );
    SftConfig {
        num_train_epochs: 0,
        max_steps: Some(10),
        ..s()
    }
    .validate()
    .expect("max_steps alone is fine");
}

#[test]
fn error_messages_say_how_to_fix() {
    let msg = GrpoConfig {
        max_completion_length: 64,
        ..GrpoConfig::default()
    }
    .validate()
    .expect_err("mismatch")
    .to_string();
    assert!(msg.contains("with_max_completion_length"), "{msg}");
    let msg = GrpoConfig {
        sync_ref_model: true,
        ..GrpoConfig::default()
    }
    .validate()
    .expect_err("no ref")
    .to_string();
    assert!(msg.contains("beta > 0"), "{msg}");
}

#[test]
fn sizes_beyond_memory_are_refused_before_anything_is_allocated() {
    let started = std::time::Instant::now();
    for (num_generations, prompts_per_step) in [
        (1_000_000_000, 8),
        (usize::MAX, 2),
        (2, usize::MAX),
        (1 << 14, 5),
    ] {
        let result = GrpoConfig {
            num_generations,
            prompts_per_step,
            ..GrpoConfig::default()
        }
        .validate();
        assert_eq!(field_of(result), "num_generations");
    }
    let at_limit = GrpoConfig {
        num_generations: 1 << 13,
        prompts_per_step: 8,
        ..GrpoConfig::default()
    };
    at_limit
        .validate()
        .expect("65,536 completions per step are allowed");
    assert_eq!(
        at_limit.completions_per_step(),
        agent_rl_algos::MAX_COMPLETIONS_PER_STEP
    );
    let result = SftConfig {
        batch_size: 1_000_000_000,
        ..SftConfig::default()
    }
    .validate();
    assert_eq!(field_of(result), "batch_size");
    assert!(started.elapsed().as_secs() < 1);
}

#[test]
fn schedule_uses_warmup_ratio() {
    let mut o = GrpoConfig::default().optimizer;
    o.learning_rate = 1.0;
    o.warmup_ratio = 0.1;
    assert_eq!(o.warmup_steps_for(100), 10);
    assert!((o.learning_rate_at(5, 100) - 0.5).abs() < 1e-12);
    assert!((o.learning_rate_at(55, 100) - 0.5).abs() < 1e-12);
}
