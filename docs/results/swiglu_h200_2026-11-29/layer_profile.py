"""Session 50, call 6: where the GPU time of a training step of 2 exact Qwen3-30B-A3B layers
goes (8 x 1024 tokens, sdpa attention, vocab 32768), per scheme: the step's time, then the
kernels of 2 profiled steps by GPU time (bench_megatron_layers.kernel_table), to find what
is left around the experts after round 46.
Usage: layer_profile.py SCHEME... (w4a16, fp8-block, int8; none+grouped for bf16 grouped)"""
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, "tools")
sys.path.insert(0, "docs/results/lanes_h200_2026-11-29")
from bench_megatron_layers import kernel_table  # noqa: E402
from megatron_qarl.layers import install_quant_refresh_hook  # noqa: E402
from megatron_qarl.models import build_model  # noqa: E402
from megatron.core.transformer.moe.moe_utils import get_moe_layer_wise_logging_tracker  # noqa
from step_ab import qwen3_30b_layers, start  # noqa: E402


def run(name, profile_steps, batch=8, seq=1024):
    scheme, grouped = ("none", True) if name == "none+grouped" else (name, False)
    torch.manual_seed(0)
    get_moe_layer_wise_logging_tracker().clear()
    preset = qwen3_30b_layers(2)
    config = preset.transformer_config(params_dtype=torch.bfloat16)
    model = build_model(config, scheme, targets="experts+attention", cuda_kernels=True,
                        grouped_experts=grouped, attention_backend="sdpa",
                        **preset.model_kwargs())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    install_quant_refresh_hook(opt, model)
    tokens = torch.randint(0, preset.vocab_size, (batch, seq), device="cuda")
    positions = torch.arange(seq, device="cuda").expand(batch, seq)

    def step():
        opt.zero_grad()
        model(tokens, positions, None, labels=tokens.roll(-1, 1)).mean().backward()
        opt.step()

    seconds = []
    for _ in range(6):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        seconds.append(time.perf_counter() - t0)
    print(f"===== {name}: {statistics.median(seconds[2:]):.4f} s/step (median of 4 after 2), "
          f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB", flush=True)
    if profile_steps:
        print(kernel_table(step, profile_steps, rows=30), flush=True)


def main(names):
    """Every scheme timed first: the profiler's CUDA tracing slows the steps after it."""
    start()
    for name in names:
        run(name, 0)
    for name in names:
        run(name, 2)
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main(sys.argv[1:])
