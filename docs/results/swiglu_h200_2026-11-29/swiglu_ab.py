"""Session 50, call 2: the training step with the experts' SwiGLU as one kernel each way
(kernels/swiglu.py, registered as quant.ops' gated-activation op) against torch's composite
(the op withdrawn), A B B A, on qwen3-moe-200m at 32 x 1024 tokens (GPU-bound) and on 2 exact
Qwen3-30B-A3B layers at 8 x 1024, for bf16 grouped experts and the quantized schemes. Each
run prints how many op calls a step made, its loss and its peak memory.
Usage: swiglu_ab.py STEPS MODEL (200m or 30b)"""
import os
import statistics
import sys

import torch.distributed as dist

sys.path.insert(0, "tools")
sys.path.insert(0, "docs/results/lanes_h200_2026-11-29")
from bench_megatron_layers import train  # noqa: E402
from megatron_qarl.models import get_preset  # noqa: E402
from megatron_qarl.quant import ops  # noqa: E402
from qarl_kernels.swiglu import gated_silu  # noqa: E402
from step_ab import qwen3_30b_layers, start  # noqa: E402

counted = [0]


def counting(h, probs):
    counted[0] += 1
    return gated_silu(h, probs)


def kernel_arm():
    ops.register_gated_activation("cuda", counting)


def torch_arm():
    ops._GATED_ACTIVATION.pop("cuda", None)


ARMS = {"kernel": kernel_arm, "torch": torch_arm}  # the baseline second
RUNS = {"none+grouped": ("none", True), "w4a16": ("w4a16", False),
        "fp8-block": ("fp8-block", False), "int8": ("int8", False)}


def ab(preset, batch, names, steps):
    order = list(ARMS)
    for name in names:
        scheme, grouped = RUNS[name]
        times = {arm: [] for arm in order}
        for arm in order + order[::-1]:
            ARMS[arm]()
            counted[0] = 0
            losses, seconds, peak, *_ = train(preset, scheme, "experts+attention", batch, 1024,
                                              2 + steps, 1e-4, True, grouped_experts=grouped)
            times[arm].append(statistics.median(seconds[2:]))
            print(f"{preset.name} x{preset.num_layers} batch {batch} {name} {arm}: "
                  f"{times[arm][-1]:.4f} s/step, {counted[0] / (2 + steps):.1f} op calls a "
                  f"step, loss {losses[0]:.4f} -> {losses[-1]:.4f}, peak {peak:.2f} GiB",
                  flush=True)
        base = statistics.mean(times["torch"])
        for arm, ts in times.items():
            print(f"== {preset.name} x{preset.num_layers} batch {batch} {name} {arm}: "
                  f"{statistics.mean(ts):.4f} s/step ({statistics.mean(ts) / base:.3f}x "
                  f"torch's; runs {', '.join(f'{t:.4f}' for t in ts)})", flush=True)


def main(steps, model):
    start()
    if model == "200m":
        ab(get_preset("qwen3-moe-200m"), 32, list(RUNS), int(steps))
    else:
        ab(qwen3_30b_layers(2), 8, ["none+grouped", "w4a16", "fp8-block"], int(steps))
    kernel_arm()
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main(*sys.argv[1:])
