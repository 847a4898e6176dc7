"""Session 47: the W4A16 quantizer writing the Hopper kernels' lane order beside the codes
(kernels/w4a16_quantize.py, lane_order) against the reorder of ten torch passes at the
kernels' first call (kernels/w4a16_lanes.to_lane_order), the way session 46 ran.
1. One layer's experts (fp32 and bf16 masters; call 1 ran fp32 alone, at 8fd5051): quantize,
   then reorder, against the fused kernel; the reorder alone. do_bench medians.
2. The qwen3-moe-200m training step (W4A16, experts+attention), A B B A per batch; a third
   arm, a probe, also skips the quantizer's NaN/inf check (one host sync a weight a step).
Usage: lanes_ab.py STEPS [LAYERS] (timed steps a run, after 2 warm-up steps; LAYERS: instead,
the step alone of that many exact Qwen3-30B-A3B layers, vocabulary 32768, batch 4 x 1024)."""
import dataclasses
import functools
import os
import statistics
import sys

import torch
import torch.distributed as dist
import triton

sys.path.insert(0, "tools")
from bench_megatron_layers import train  # noqa: E402
from megatron_qarl.layers import enable_cuda_kernels  # noqa: E402
from megatron_qarl.models import get_preset  # noqa: E402
from megatron_qarl.quant import W4A16, get_scheme, ops  # noqa: E402
from megatron.core import parallel_state, tensor_parallel  # noqa: E402
from qarl_kernels.w4a16_lanes import to_lane_order  # noqa: E402
from qarl_kernels.w4a16_quantize import w4a16_quantize  # noqa: E402


def kernels():
    scheme = get_scheme("w4a16")
    for label, shape, dtype in [(label, shape, dtype) for dtype in (torch.float32, torch.bfloat16)
                                for label, shape in [("W13 E128", (128, 1536, 2048)),
                                                     ("W2 E128", (128, 2048, 768))]]:
        master = torch.randn(shape, device="cuda").to(dtype)
        fused = w4a16_quantize(master, scheme, lane_order=True)
        assert torch.equal(fused.lane_codes[1], to_lane_order(fused.data)), label

        def before():
            to_lane_order(w4a16_quantize(master, scheme, check_finite=False,
                                         lane_order=False).data)

        times = {
            "quantize then reorder": triton.testing.do_bench(before, rep=200),
            "fused": triton.testing.do_bench(lambda: w4a16_quantize(
                master, scheme, check_finite=False, lane_order=True), rep=200),
            "quantize, codes only": triton.testing.do_bench(lambda: w4a16_quantize(
                master, scheme, check_finite=False, lane_order=False), rep=200),
            "reorder alone": triton.testing.do_bench(lambda: to_lane_order(fused.data),
                                                     rep=200),
        }
        print(f"{label} {dtype} masters: " + ", ".join(f"{k} {v * 1e3:.1f} us"
                                                    for k, v in times.items()), flush=True)
        del master, fused


def step_ab(steps, preset, batches):
    arms = {
        "fused lanes": w4a16_quantize,
        "reorder at first call": functools.partial(w4a16_quantize, lane_order=False),
        "fused lanes, no NaN check (probe)": functools.partial(w4a16_quantize,
                                                               check_finite=False),
    }
    order = ["fused lanes", "reorder at first call", "fused lanes, no NaN check (probe)"]
    for batch in batches:
        times = {arm: [] for arm in arms}
        for arm in order + order[::-1]:
            ops.register_quantize(W4A16, "cuda", arms[arm])
            losses, seconds, *_ = train(preset, "w4a16", "experts+attention", batch, 1024,
                                        2 + steps, 1e-4, True)
            times[arm].append(statistics.median(seconds[2:]))
            print(f"batch {batch} {arm}: {times[arm][-1]:.4f} s/step, loss "
                  f"{losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
        base = statistics.mean(times["reorder at first call"])
        for arm, ts in times.items():
            print(f"== batch {batch} {arm}: {statistics.mean(ts):.4f} s/step "
                  f"({statistics.mean(ts) / base:.3f}x the reorder's)", flush=True)
    ops.register_quantize(W4A16, "cuda", w4a16_quantize)


def main(steps, layers=None):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29514", rank=0, world_size=1)
    torch.cuda.set_device(0)
    parallel_state.initialize_model_parallel()
    tensor_parallel.model_parallel_cuda_manual_seed(0)
    enable_cuda_kernels()
    print(torch.cuda.get_device_name(), flush=True)
    if layers:
        preset = dataclasses.replace(get_preset("qwen3-30b-a3b"), num_layers=layers,
                                     vocab_size=32768)
        step_ab(steps, preset, (4,))
    else:
        kernels()
        step_ab(steps, get_preset("qwen3-moe-200m"), (4, 32))
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main(*map(int, sys.argv[1:]))
