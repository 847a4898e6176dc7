"""Session 50, call 7: scheme 'none''s per-step copy of the experts with its NaN/inf count in
one pass (kernels/bf16_quantize.py, registered as NoQuant's quantize op on CUDA) against
NoQuant.quantize_weight's torch isfinite passes (the op withdrawn), A B B A, for bf16 grouped
experts: 2 exact Qwen3-30B-A3B layers at 8 x 1024 tokens and qwen3-moe-200m at 32 x 1024.
Usage: bf16_check_ab.py STEPS"""
import os
import statistics
import sys

import torch.distributed as dist

sys.path.insert(0, "tools")
sys.path.insert(0, "docs/results/lanes_h200_2026-11-29")
from bench_megatron_layers import train  # noqa: E402
from megatron_qarl.models import get_preset  # noqa: E402
from megatron_qarl.quant import NoQuant, ops  # noqa: E402
from qarl_kernels.bf16_quantize import bf16_quantize  # noqa: E402
from step_ab import qwen3_30b_layers, start  # noqa: E402

counted = [0]


def counting(*args, **kwargs):
    counted[0] += 1
    return bf16_quantize(*args, **kwargs)


ARMS = {"one pass": lambda: ops.register_quantize(NoQuant, "cuda", counting),
        "torch": lambda: ops._QUANTIZE.pop(("NoQuant", "cuda"), None)}  # the baseline second


def main(steps):
    start()
    steps = int(steps)
    for preset, batch in ((qwen3_30b_layers(2), 8), (get_preset("qwen3-moe-200m"), 32)):
        times = {arm: [] for arm in ARMS}
        for arm in ["one pass", "torch", "torch", "one pass"]:
            ARMS[arm]()
            counted[0] = 0
            losses, seconds, peak, *_ = train(preset, "none", "experts+attention", batch, 1024,
                                              2 + steps, 1e-4, True, grouped_experts=True)
            times[arm].append(statistics.median(seconds[2:]))
            print(f"{preset.name} x{preset.num_layers} batch {batch} {arm}: "
                  f"{times[arm][-1]:.4f} s/step, {counted[0] / (2 + steps):.1f} op calls a "
                  f"step, loss {losses[0]:.4f} -> {losses[-1]:.4f}, peak {peak:.2f} GiB",
                  flush=True)
        base = statistics.mean(times["torch"])
        for arm, ts in times.items():
            print(f"== {preset.name} x{preset.num_layers} batch {batch} {arm}: "
                  f"{statistics.mean(ts):.4f} s/step ({statistics.mean(ts) / base:.3f}x "
                  f"torch's; runs {', '.join(f'{t:.4f}' for t in ts)})", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main(*sys.argv[1:])
