"""Session 48, call 1: the training step A B B A with the model's weights re-quantized together
at the first read after the optimizer step (weight_cache.quantize_together: one host sync for
all their NaN/inf checks) against each re-quantized at its own first read with its own sync
(as before: the `together` argument dropped). Prints how many refreshes a step each arm made,
so that an arm that did not swap shows.
Usage: refresh_ab.py STEPS LAYERS SCHEMES (timed steps a run after 2 warm-up steps; LAYERS:
that many exact Qwen3-30B-A3B layers at 4 x 1024 tokens, 0 for qwen3-moe-200m at 4 and 32 x
1024; SCHEMES: comma-separated, e.g. w4a16,fp8-block,int8)"""
import os
import statistics
import sys

import torch.distributed as dist

sys.path.insert(0, "tools")
sys.path.insert(0, "docs/results/lanes_h200_2026-11-29")
from bench_megatron_layers import train  # noqa: E402
from megatron_qarl.layers import weight_cache  # noqa: E402
from megatron_qarl.models import get_preset  # noqa: E402
from step_ab import qwen3_30b_layers, start  # noqa: E402

_invalidate = weight_cache.QuantizedWeightCache.invalidate
_quantize_together = weight_cache.quantize_together
refreshes = [0]


def counted(caches):
    refreshes[0] += 1
    _quantize_together(caches)


def alone(cache, together=()):
    _invalidate(cache)


ARMS = {"together": _invalidate, "one a weight": alone}


def refresh_ab(steps, preset, batches, schemes):
    weight_cache.quantize_together = counted
    order = list(ARMS)
    for batch in batches:
        for scheme in schemes:
            times = {arm: [] for arm in ARMS}
            for arm in order + order[::-1]:
                weight_cache.QuantizedWeightCache.invalidate = ARMS[arm]
                refreshes[0] = 0
                losses, seconds, *_ = train(preset, scheme, "experts+attention", batch, 1024,
                                            2 + steps, 1e-4, True)
                times[arm].append(statistics.median(seconds[2:]))
                print(f"batch {batch} {scheme} {arm}: {times[arm][-1]:.4f} s/step, "
                      f"{refreshes[0] / (2 + steps):.1f} refreshes a step, loss "
                      f"{losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
            base = statistics.mean(times[order[1]])
            for arm, ts in times.items():
                print(f"== batch {batch} {scheme} {arm}: {statistics.mean(ts):.4f} s/step "
                      f"({statistics.mean(ts) / base:.3f}x {order[1]}'s)", flush=True)
    weight_cache.QuantizedWeightCache.invalidate = _invalidate


def main(steps, layers, schemes):
    start()
    schemes = schemes.split(",")
    if int(layers):
        refresh_ab(int(steps), qwen3_30b_layers(int(layers)), (4,), schemes)
    else:
        refresh_ab(int(steps), get_preset("qwen3-moe-200m"), (4, 32), schemes)
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main(*sys.argv[1:])
