"""Session 49, call 5: does session 48's sync-free dropless permutation explain the faster
GPU-bound step of calls 2-3 (qwen3-moe-200m at 32 x 1024 tokens: grouped bf16 0.144-0.145 s
against session 46's 0.195, W4A16 0.145-0.161 against 0.174)? Session 48's arms
(refresh_ab.permute_arm: nonzero_static of the known count, against Megatron's masked_select
with its two host syncs a MoE layer), A B B A twice, for W4A16 and for bf16 grouped experts.
Usage: permute_b32_ab.py STEPS BATCH"""
import os
import statistics
import sys

import torch.distributed as dist

sys.path.insert(0, "docs/results/refresh_h200_2026-11-29")
from refresh_ab import EXPERIMENTS, counted, start, train  # noqa: E402
from megatron_qarl.models import get_preset  # noqa: E402

RUNS = {"w4a16": ("w4a16", False), "none+grouped": ("none", True)}


def main(steps, batch):
    start()
    arms = EXPERIMENTS["permute"]
    order = ["known count (nonzero_static)", "Megatron's masked_select"]
    preset = get_preset("qwen3-moe-200m")
    for name, (scheme, grouped) in RUNS.items():
        times = {arm: [] for arm in order}
        for arm in (order + order[::-1]) * 2:
            arms[arm]()
            counted[0] = 0
            losses, seconds, *_ = train(preset, scheme, "experts+attention", int(batch), 1024,
                                        2 + int(steps), 1e-4, True, grouped_experts=grouped)
            times[arm].append(statistics.median(seconds[2:]))
            print(f"batch {batch} {name} {arm}: {times[arm][-1]:.4f} s/step, "
                  f"{counted[0] / (2 + int(steps)):.1f} known-count permutations a step, loss "
                  f"{losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
        base = statistics.mean(times[order[1]])
        for arm, ts in times.items():
            print(f"== batch {batch} {name} {arm}: {statistics.mean(ts):.4f} s/step "
                  f"({statistics.mean(ts) / base:.3f}x masked_select's; runs "
                  f"{', '.join(f'{t:.4f}' for t in ts)})", flush=True)
    arms[order[0]]()
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main(*sys.argv[1:])
