"""Session 51, call 2: masters_ab.py's A B B A after the table's host cost was cut (one pass
over the masters, no detach: 0.2 -> 0.08 ms on the CPU here), at a batch given, so that the
step is bound by the GPU rather than the host (2 exact Qwen3-30B-A3B layers, 8 or 16 x 1024).
Usage: masters_ab2.py STEPS BATCH"""
import os
import statistics
import sys

import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from masters_ab import ARMS, IN_PLACE, RUNS, QuantizedWeightCache, qwen3_30b_layers, start, \
    train  # noqa: E402


def main(steps, batch):
    start()
    steps, batch = int(steps), int(batch)
    preset = qwen3_30b_layers(2)
    order = list(ARMS)
    for name, (scheme, grouped) in RUNS.items():
        times, peaks = {arm: [] for arm in order}, {arm: [] for arm in order}
        for arm in order + order[::-1]:
            QuantizedWeightCache.quantizer_input = ARMS[arm]
            losses, seconds, peak, *_ = train(preset, scheme, "experts+attention", batch, 1024,
                                              2 + steps, 1e-4, True, grouped_experts=grouped)
            times[arm].append(statistics.median(seconds[2:]))
            peaks[arm].append(peak)
            print(f"batch {batch} {name} {arm}: {times[arm][-1]:.4f} s/step, loss "
                  f"{losses[0]:.4f} -> {losses[-1]:.4f}, peak {peak:.2f} GiB", flush=True)
        base = statistics.mean(times["stacked"])
        for arm, ts in times.items():
            print(f"== batch {batch} {name} {arm}: {statistics.mean(ts):.4f} s/step "
                  f"({statistics.mean(ts) / base:.3f}x stacked; runs "
                  f"{', '.join(f'{t:.4f}' for t in ts)}), peak {max(peaks[arm]):.2f} GiB",
                  flush=True)
    QuantizedWeightCache.quantizer_input = IN_PLACE
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main(*sys.argv[1:])
