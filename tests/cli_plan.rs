//! `agent-rl plan`: the issue's 7B verdicts, the JSON shape, a config file, and bad flags.

use std::process::{Command, Output};

use serde_json::Value;

fn plan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .arg("plan")
        .args(args)
        .output()
        .unwrap()
}

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let output = plan(&all);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "one JSON object: {text}");
    serde_json::from_str(&text).unwrap()
}

const GRPO_7B: [&str; 14] = [
    "--preset",
    "qwen2.5-7b",
    "--method",
    "grpo",
    "--num-generations",
    "8",
    "--prompts-per-step",
    "8",
    "--max-prompt-length",
    "512",
    "--max-completion-length",
    "1024",
    "--device-memory",
    "80GB",
];

#[test]
fn qwen_7b_lora_grpo_fits_in_80gb_and_full_f32_does_not() {
    let mut lora = GRPO_7B.to_vec();
    lora.extend([
        "--lora-r",
        "64",
        "--dtype",
        "bf16",
        "--gradient-checkpointing",
    ]);
    let output = plan(&lora);
    assert!(output.status.success());
    let table = String::from_utf8(output.stdout).unwrap();
    for row in [
        "| weights |",
        "| gradients |",
        "| optimizer (AdamW) |",
        "| reference model | 0 |",
        "| activations |",
        "| rollout KV cache |",
        "| total (peak) |",
    ] {
        assert!(table.contains(row), "{row} missing from\n{table}");
    }
    assert!(table.contains(": fits ("), "{table}");

    let fits = json(&lora);
    assert_eq!(fits["fits"], Value::Bool(true));
    let breakdown = fits["breakdown"].as_object().unwrap();
    assert!(
        breakdown.values().all(Value::is_u64) && breakdown.len() == 7,
        "{fits}"
    );
    assert!(fits["total_bytes"].as_u64().unwrap() <= 80_000_000_000);

    let full = json(&[&GRPO_7B[..], &["--dtype", "f32"]].concat());
    assert_eq!(full["fits"], Value::Bool(false));
    assert!(full["total_bytes"].as_u64().unwrap() > 80_000_000_000);
    // Full fine-tuning keeps a second f32 copy as the KL reference; LoRA keeps none.
    assert_eq!(full["breakdown"]["reference"], full["breakdown"]["weights"]);
    assert_eq!(full["breakdown"]["reference"], 7_615_616_512u64 * 4);
    assert_eq!(fits["breakdown"]["reference"], 0);
    let table = String::from_utf8(plan(&GRPO_7B).stdout).unwrap();
    assert!(table.contains("does NOT fit"), "{table}");
}

#[test]
fn a_config_file_plans_like_its_preset() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    // Qwen2.5-0.5B's config.json fields that matter (plus one the planner ignores).
    std::fs::write(
        &config,
        r#"{"architectures": ["Qwen2ForCausalLM"], "hidden_size": 896,
            "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14,
            "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": true,
            "rope_theta": 1000000.0, "max_position_embeddings": 32768, "model_type": "qwen2"}"#,
    )
    .unwrap();
    let args = ["--method", "sft", "--batch-size", "2"];
    let from_file = json(&[&["--config", config.to_str().unwrap()], &args[..]].concat());
    let from_preset = json(&[&["--preset", "qwen2.5-0.5b"], &args[..]].concat());
    assert_eq!(from_file, from_preset);
    assert_eq!(from_file["parameters"], 494_032_768);
    assert_eq!(from_file["fits"], Value::Null);
}

#[test]
fn bad_flags_are_refused_with_the_flag_named() {
    let cases: [(&[&str], &str); 7] = [
        (&["--preset", "qwen2.5-70b"], "--preset"),
        (&["--preset", "qwen2.5-7b", "--method", "ppo"], "--method"),
        (&["--preset", "qwen2.5-7b", "--dtype", "int8"], "--dtype"),
        (
            &["--preset", "qwen2.5-7b", "--device-memory", "80XB"],
            "--device-memory",
        ),
        (&["--preset", "qwen2.5-7b", "--lora-r", "0"], "--lora-r"),
        (
            &["--preset", "qwen2.5-7b", "--lora-targets", "attn"],
            "--lora-targets",
        ),
        (
            &["--config", "/nonexistent/config.json"],
            "/nonexistent/config.json",
        ),
    ];
    for (args, named) in cases {
        let output = plan(args);
        assert!(!output.status.success(), "{args:?} succeeded");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(named), "{args:?}: {stderr}");
    }
    let output = plan(&[]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--preset"));
}
