"""Session 46, call 3: the qwen3-moe-200m training step with the dense STE backward on bf16
tensor cores (kernels/linear_backward.py, registered) and without it (the reference's fp32
products), in the order A B B A per scheme, at batch 32 x 1024 (GPU-bound) and 4 x 1024.
Usage: dense_backward_ab.py STEPS (timed steps a run, after 2 warm-up steps)."""
import os
import statistics
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, "tools")
from bench_megatron_layers import train  # noqa: E402
from megatron_qarl.layers import enable_cuda_kernels  # noqa: E402
from megatron_qarl.models import get_preset  # noqa: E402
from megatron_qarl.quant import ops  # noqa: E402
from megatron.core import parallel_state, tensor_parallel  # noqa: E402


def main(steps):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29512", rank=0, world_size=1)
    torch.cuda.set_device(0)
    parallel_state.initialize_model_parallel()
    tensor_parallel.model_parallel_cuda_manual_seed(0)
    enable_cuda_kernels()
    registered = dict(ops._LINEAR_BACKWARD)
    preset = get_preset("qwen3-moe-200m")
    print(torch.cuda.get_device_name(), flush=True)
    for batch in (32, 4):
        for scheme in ("w4a16", "fp8-block", "int8"):
            times = {"bf16 tensor cores": [], "fp32 reference": []}
            for mode in ("bf16 tensor cores", "fp32 reference", "fp32 reference",
                         "bf16 tensor cores"):
                ops._LINEAR_BACKWARD.clear()
                if mode == "bf16 tensor cores":
                    ops._LINEAR_BACKWARD.update(registered)
                losses, seconds, *_ = train(preset, scheme, "experts+attention", batch, 1024,
                                            2 + steps, 1e-4, True)
                times[mode].append(statistics.median(seconds[2:]))
                print(f"batch {batch} {scheme} {mode}: {times[mode][-1]:.4f} s/step, loss "
                      f"{losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
            new, old = (statistics.mean(times[m]) for m in times)
            print(f"== batch {batch} {scheme}: {new:.4f} against {old:.4f} s/step "
                  f"({new / old:.3f}x)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main(int(sys.argv[1]))
