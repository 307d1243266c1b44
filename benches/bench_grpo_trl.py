"""Reference side of the GRPO benchmark: TRL's GRPOTrainer on the directory agent-rl-bench's bench_grpo wrote.

Same model weights, tokenizer and prompt texts as the Rust side; same workload and the same flags
(defaults: 8 prompts x K = 8 completions per step, 64-token prompts, exactly 64 completion tokens
via min_new_tokens), beta 0.04, temperature 1, AdamW at a constant learning rate. Gradient
checkpointing is a flag (TRL turns it on by default; it trades speed for memory, so the benchmark
states it). Seconds per optimiser step are the median over the steps after the first (warm-up);
generated tokens/s = prompts * K * completion tokens / step time; the rollout share (TRL's
generation call, timed by wrapping it) is reported beside it; peak_rss_bytes is the process's
peak resident set (ru_maxrss). Prints one JSON line. Run through benches/run_bench_grpo.sh:

    python3 benches/bench_grpo_trl.py --out DIR [--steps 4] [--prompt-length 64]
        [--completion-length 64] [--num-generations 8] [--prompts 8] [--gradient-checkpointing off]
"""
import argparse
import json
import resource
import os
import tempfile
import time

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
from trl import GRPOConfig, GRPOTrainer


def share_of_e(completions, **_):
    """The Rust side's reward: the share of the letter e in the completion."""
    return [text.count("e") / (len(text) + 1.0) for text in completions]


def time_generation(trainer, times):
    """Wraps the trainer's generation call so that the rollout share of each step is timed."""
    generate = trainer._generate_single_turn

    def timed(*args, **kwargs):
        started = time.perf_counter()
        out = generate(*args, **kwargs)
        times.append(time.perf_counter() - started)
        return out

    trainer._generate_single_turn = timed


class StepTimer(TrainerCallback):
    """Wall-clock time of each optimiser step (generation, scoring, loss, backward, AdamW)."""

    def __init__(self):
        self.started = None
        self.times = []

    def on_step_begin(self, args, state, control, **kwargs):
        self.started = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        self.times.append(time.perf_counter() - self.started)


def positive(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not positive")
    return value


def parse_args():
    parser = argparse.ArgumentParser(description="TRL side of the GRPO step benchmark")
    parser.add_argument("--out", default="target/bench_grpo", help="directory bench_grpo wrote")
    parser.add_argument("--steps", type=positive, default=4)
    parser.add_argument("--prompt-length", type=positive, default=64)
    parser.add_argument("--completion-length", type=positive, default=64)
    parser.add_argument("--num-generations", type=positive, default=8)
    parser.add_argument("--prompts", type=positive, default=8)
    parser.add_argument("--gradient-checkpointing", choices=["on", "off"], default="off")
    args = parser.parse_args()
    if args.steps < 2:
        parser.error("--steps must be at least 2 (the first step is warm-up)")
    return args


def main():
    args = parse_args()
    directory, steps = args.out, args.steps
    PROMPTS, K = args.prompts, args.num_generations
    PROMPT_TOKENS, COMPLETION_TOKENS = args.prompt_length, args.completion_length
    checkpointing = args.gradient_checkpointing == "on"
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    with open(os.path.join(directory, "prompts.json")) as f:
        prompts = json.load(f)
    lengths = [len(tokenizer(text)["input_ids"]) for text in prompts]
    assert lengths == [PROMPT_TOKENS] * PROMPTS, f"prompt lengths differ from the Rust side: {lengths}"
    model = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32)
    dataset = Dataset.from_dict({"prompt": prompts * steps})
    timer = StepTimer()
    with tempfile.TemporaryDirectory() as output_dir:
        config = GRPOConfig(
            output_dir=output_dir,
            per_device_train_batch_size=PROMPTS * K,
            num_generations=K,
            max_completion_length=COMPLETION_TOKENS,
            generation_kwargs={"min_new_tokens": COMPLETION_TOKENS},
            beta=0.04,
            temperature=1.0,
            learning_rate=1e-6,
            lr_scheduler_type="constant",
            max_steps=steps,
            logging_steps=1,
            save_strategy="no",
            report_to="none",
            use_cpu=True,
            bf16=False,
            seed=0,
            dataloader_num_workers=0,
            gradient_checkpointing=checkpointing,
        )
        trainer = GRPOTrainer(model=model, reward_funcs=share_of_e, args=config, train_dataset=dataset,
                              processing_class=tokenizer, callbacks=[timer])
        rollout_times = []
        time_generation(trainer, rollout_times)
        trainer.train()
        logged = [entry for entry in trainer.state.log_history if "completions/mean_length" in entry]
    assert all(abs(e["completions/mean_length"] - COMPLETION_TOKENS) < 1e-3 for e in logged), logged
    times = sorted(timer.times[1:])
    step = times[len(times) // 2]
    rollouts = sorted(rollout_times[1:])
    rollout = rollouts[len(rollouts) // 2]
    print(json.dumps({
        "impl": f"TRL {__import__('trl').__version__} GRPOTrainer / transformers "
                f"{__import__('transformers').__version__} / torch {torch.__version__}",
        "backend": f"cpu, {torch.get_num_threads()} threads",
        "prompt_length": PROMPT_TOKENS,
        "completion_length": COMPLETION_TOKENS,
        "num_generations": K,
        "prompts": PROMPTS,
        "gradient_checkpointing": checkpointing,
        "steps_timed": len(times),
        "seconds_per_step": step,
        "step_s": step,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "generated_tokens_per_s": PROMPTS * K * COMPLETION_TOKENS / step,
        "rollout_s": rollout,
        "rollout_tokens_per_s": PROMPTS * K * COMPLETION_TOKENS / rollout,
        "kl_last": logged[-1].get("kl") if logged else None,
    }))


if __name__ == "__main__":
    main()
