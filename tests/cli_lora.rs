//! `--adapter` on `logprobs`/`generate` and `agent-rl merge`, against PEFT's golden logits
//! (`agent-rl-core/tests/fixtures/lora_tiny`).

use std::path::PathBuf;
use std::process::Command;

use safetensors::SafeTensors;
use serde_json::Value;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-core/tests/fixtures")
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .args(args)
        .output()
        .unwrap()
}

fn json_of(args: &[&str]) -> Value {
    let output = run(args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// PEFT's logits of the first input row, `[8, vocab]`, and that row's ids.
fn golden_first_row() -> (Vec<Vec<f32>>, Vec<u32>) {
    let bytes = std::fs::read(fixtures().join("lora_tiny/expected.safetensors")).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let floats = |key: &str| -> (Vec<usize>, Vec<f32>) {
        let view = file.tensor(key).unwrap();
        let data = view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        (view.shape().to_vec(), data)
    };
    let (shape, logits) = floats("logits");
    let (ids_shape, ids) = floats("input_ids");
    let vocab = shape[2];
    let rows = logits[..shape[1] * vocab]
        .chunks(vocab)
        .map(<[f32]>::to_vec)
        .collect();
    (
        rows,
        ids[..ids_shape[1]].iter().map(|&v| v as u32).collect(),
    )
}

fn logsumexps(value: &Value) -> Vec<f64> {
    value["positions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["logsumexp"].as_f64().unwrap())
        .collect()
}

#[test]
fn adapter_flag_and_merge_match_peft() {
    let base = fixtures().join("qwen2_tiny/untied_f32");
    let adapter = fixtures().join("lora_tiny/adapter");
    let (golden, ids) = golden_first_row();
    let ids_arg = ids.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let (base_str, adapter_str) = (base.to_str().unwrap(), adapter.to_str().unwrap());
    let with_adapter = json_of(&[
        "logprobs",
        "--model",
        base_str,
        "--adapter",
        adapter_str,
        "--ids",
        &ids_arg,
    ]);
    for (got, row) in logsumexps(&with_adapter).iter().zip(&golden) {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let want = f64::from(max)
            + row
                .iter()
                .map(|&v| f64::from(v - max).exp())
                .sum::<f64>()
                .ln();
        assert!((got - want).abs() < 1e-4, "logsumexp {got} vs PEFT {want}");
    }
    let without = json_of(&["logprobs", "--model", base_str, "--ids", &ids_arg]);
    assert_ne!(logsumexps(&without), logsumexps(&with_adapter));

    let out = tempfile::tempdir().unwrap();
    let merged = out.path().join("merged");
    let merged_str = merged.to_str().unwrap();
    let status = run(&[
        "merge",
        "--model",
        base_str,
        "--adapter",
        adapter_str,
        "--out",
        merged_str,
    ]);
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(merged.join("tokenizer.json").exists());
    let from_merged = json_of(&["logprobs", "--model", merged_str, "--ids", &ids_arg]);
    for (a, b) in logsumexps(&from_merged)
        .iter()
        .zip(logsumexps(&with_adapter))
    {
        assert!((a - b).abs() < 1e-4, "merged {a} vs adapter {b}");
    }
    let generate = |model: &str, adapter: Option<&str>| {
        let mut args = vec![
            "generate",
            "--model",
            model,
            "--prompt-ids",
            &ids_arg,
            "--max-new-tokens",
            "6",
            "--ignore-eos",
            "--json",
        ];
        if let Some(adapter) = adapter {
            args.extend(["--adapter", adapter]);
        }
        json_of(&args)["token_ids"].clone()
    };
    assert_eq!(
        generate(base_str, Some(adapter_str)),
        generate(merged_str, None)
    );

    // A directory without an adapter is refused, naming the flag and the file.
    let missing = out.path().join("no-adapter");
    let failed = run(&[
        "logprobs",
        "--model",
        base_str,
        "--adapter",
        missing.to_str().unwrap(),
        "--ids",
        "1,2",
    ]);
    let message = String::from_utf8_lossy(&failed.stderr);
    assert!(!failed.status.success());
    assert!(
        message.contains("--adapter") && message.contains("adapter_config.json"),
        "{message}"
    );
}

fn lora_run_file(dir: &std::path::Path, run: &std::path::Path, steps: usize, r: usize) -> PathBuf {
    let path = dir.join(format!("lora_{steps}_{r}.toml"));
    let text = format!(
        "[model]\ntiny = true\n[data]\ntoy = 8\n[run]\ndir = {:?}\ncheckpoint_every = 1\n\
         [grpo]\nnum_generations = 2\nprompts_per_step = 2\nmax_steps = {steps}\nbeta = 0.04\n\
         max_completion_length = 8\nmax_tool_iterations = 1\n[grpo.sampling]\nmax_new_tokens = 8\n\
         [lora]\nr = {r}\nalpha = 8.0\ntarget_modules = [\"q_proj\", \"v_proj\"]\n",
        run.to_str().unwrap()
    );
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn train_grpo_lora_section_checkpoints_adapters_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let first = lora_run_file(dir.path(), &run_dir, 1, 4);
    let out = run(&["train", "grpo", "--config", first.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for file in [
        "checkpoint-1/adapter/adapter_config.json",
        "checkpoint-1/adapter/adapter_model.safetensors",
        "final_model/model.safetensors",
    ] {
        assert!(run_dir.join(file).is_file(), "{file}");
    }
    assert!(!run_dir.join("checkpoint-1/model").exists());
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(run_dir.join("checkpoint-1/adapter/adapter_config.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(config["r"], 4);
    assert_eq!(
        config["target_modules"],
        serde_json::json!(["q_proj", "v_proj"])
    );

    let longer = lora_run_file(dir.path(), &run_dir, 2, 4);
    let resumed = run(&[
        "train",
        "grpo",
        "--config",
        longer.to_str().unwrap(),
        "--resume",
        run_dir.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert!(stdout.contains("global step 2"), "{stdout}");

    let bad = lora_run_file(dir.path(), &dir.path().join("bad"), 1, 0);
    let failed = run(&["train", "grpo", "--config", bad.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(!failed.status.success());
    assert!(
        stderr.contains("[lora]") && stderr.contains("lora.r"),
        "{stderr}"
    );
}

#[test]
fn train_base_dtype_flag_holds_the_lora_base_in_bf16_and_needs_lora() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let file = lora_run_file(dir.path(), &run_dir, 1, 4);
    let file = file.to_str().unwrap();
    let resolved = json_of(&[
        "train",
        "grpo",
        "--config",
        file,
        "--base-dtype",
        "bf16",
        "--print-config",
    ]);
    assert_eq!(resolved["lora"]["base_dtype"], "bf16", "{resolved}");
    let out = run(&["train", "grpo", "--config", file, "--base-dtype", "bf16"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The merged final model is an ordinary f32 checkpoint.
    let bytes = std::fs::read(run_dir.join("final_model/model.safetensors")).unwrap();
    let tensors = SafeTensors::deserialize(&bytes).unwrap();
    let (_, embedding) = tensors
        .tensors()
        .into_iter()
        .find(|(name, _)| name == "model.embed_tokens.weight")
        .unwrap();
    assert_eq!(embedding.dtype(), safetensors::Dtype::F32);

    let text = std::fs::read_to_string(file).unwrap();
    let full_grpo = dir.path().join("full_grpo.toml");
    std::fs::write(&full_grpo, &text[..text.find("[lora]").unwrap()]).unwrap();
    let full_sft = dir.path().join("full_sft.toml");
    let sft =
        "[model]\ntiny = true\n[data]\ntoy = 8\n[run]\ndir = \"unused\"\n[sft]\nmax_steps = 1\n";
    std::fs::write(&full_sft, sft).unwrap();
    for (command, full) in [("sft", full_sft), ("grpo", full_grpo)] {
        let args = ["train", command, "--config", full.to_str().unwrap()];
        let failed = run(&[&args[..], &["--base-dtype", "bf16"]].concat());
        let stderr = String::from_utf8_lossy(&failed.stderr);
        assert!(!failed.status.success(), "{command}");
        assert!(
            stderr.contains("--base-dtype bf16 needs LoRA") && stderr.contains("[lora]"),
            "{stderr}"
        );
        let unknown = run(&[&args[..], &["--base-dtype", "fp8"]].concat());
        let stderr = String::from_utf8_lossy(&unknown.stderr);
        assert!(
            stderr.contains("fp8") && stderr.contains("bf16"),
            "{stderr}"
        );
    }
}
