"""Session 51, call 1: the training step with the weight cache handing the quantizer each
expert's master in place (this tree: QuantizedWeightCache.quantizer_input) against the
stacked copy of them (the path before: QuantizedWeightCache.master, torch.stack once a step),
A B B A, on 2 exact Qwen3-30B-A3B layers at 8 x 1024 tokens, for each scheme (bf16 grouped
experts for 'none'). Each run prints its loss and its peak memory.
Usage: masters_ab.py STEPS"""
import os
import statistics
import sys

import torch.distributed as dist

sys.path.insert(0, "tools")
sys.path.insert(0, "docs/results/lanes_h200_2026-11-29")
from bench_megatron_layers import train  # noqa: E402
from megatron_qarl.layers.weight_cache import QuantizedWeightCache  # noqa: E402
from step_ab import qwen3_30b_layers, start  # noqa: E402

IN_PLACE = QuantizedWeightCache.quantizer_input


def stacked(cache):
    return cache.master().detach()


ARMS = {"in place": IN_PLACE, "stacked": stacked}  # the baseline second
RUNS = {"none+grouped": ("none", True), "w4a16": ("w4a16", False),
        "fp8-block": ("fp8-block", False), "int8": ("int8", False)}


def main(steps):
    start()
    steps = int(steps)
    preset, batch = qwen3_30b_layers(2), 8
    order = list(ARMS)
    for name, (scheme, grouped) in RUNS.items():
        times = {arm: [] for arm in order}
        for arm in order + order[::-1]:
            QuantizedWeightCache.quantizer_input = ARMS[arm]
            losses, seconds, peak, *_ = train(preset, scheme, "experts+attention", batch, 1024,
                                              2 + steps, 1e-4, True, grouped_experts=grouped)
            times[arm].append(statistics.median(seconds[2:]))
            print(f"{preset.name} x{preset.num_layers} batch {batch} {name} {arm}: "
                  f"{times[arm][-1]:.4f} s/step, loss {losses[0]:.4f} -> {losses[-1]:.4f}, "
                  f"peak {peak:.2f} GiB", flush=True)
        base = statistics.mean(times["stacked"])
        for arm, ts in times.items():
            print(f"== {name} {arm}: {statistics.mean(ts):.4f} s/step "
                  f"({statistics.mean(ts) / base:.3f}x stacked; runs "
                  f"{', '.join(f'{t:.4f}' for t in ts)})", flush=True)
    QuantizedWeightCache.quantizer_input = IN_PLACE
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main(*sys.argv[1:])
