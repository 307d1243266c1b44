"""Reference side of the policy benchmark: the same model and workload in transformers (PyTorch).

Mirrors agent-rl-bench/src/bin/bench_policy.rs: a Qwen2 with hidden 256, intermediate 704, 4 layers, 4 heads,
2 KV heads, vocab 1024 (random weights); generation of 64 sequences x 64 new tokens (greedy,
16-token prompts unless a third argument gives their length, KV cache) and one training step (forward + backward + global-norm clip + AdamW)
on 64 x 128 tokens. Prints one JSON line. Run through benches/run_bench.sh.
"""
import json
import sys
import time

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM


def main():
    device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    prompt_length = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=1024, hidden_size=256, intermediate_size=704, num_hidden_layers=4,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=max(1024, prompt_length + 64),
                         tie_word_embeddings=True)
    model = Qwen2ForCausalLM(config).to(device).float().eval()
    prompts = torch.randint(0, 1000, (64, prompt_length), device=device)
    mask = torch.ones_like(prompts)
    sync = (lambda: torch.cuda.synchronize()) if device == "cuda" else (lambda: None)

    def generate():
        with torch.no_grad():
            return model.generate(input_ids=prompts, attention_mask=mask, max_new_tokens=64, min_new_tokens=64,
                                  do_sample=False, pad_token_id=0, eos_token_id=None)

    generate()
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        out = generate()
        sync()
        times.append(time.perf_counter() - start)
        assert out.shape == (64, prompt_length + 64)
    gen = sorted(times)[len(times) // 2]

    model.train()
    batch = torch.randint(0, 1000, (64, 128), device=device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, eps=1e-8, weight_decay=0.0)
    times = []
    for step in range(repeats + 1):
        sync()
        start = time.perf_counter()
        logits = model(input_ids=batch).logits[:, :-1]
        logps = torch.log_softmax(logits.float(), -1).gather(-1, batch[:, 1:, None]).squeeze(-1)
        loss = -logps.mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        sync()
        if step > 0:
            times.append(time.perf_counter() - start)
    train = sorted(times)[len(times) // 2]
    print(json.dumps({
        "impl": f"transformers {__import__('transformers').__version__} / torch {torch.__version__}",
        "backend": f"{device}, {torch.get_num_threads()} threads",
        "prompt_length": prompt_length,
        "generate_s": gen, "generate_tokens_per_s": 64 * 64 / gen,
        "train_step_s": train, "train_tokens_per_s": 64 * 128 / train,
    }))


if __name__ == "__main__":
    main()
