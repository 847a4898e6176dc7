"""Session 47, call 5: the GPU kernels of two training steps of 2 exact Qwen3-30B-A3B layers
(vocabulary 32768, batch 4 x 1024, W4A16 experts+attention), the quantizer writing the lane
order against the reorder at the kernels' first call: call 4 found the step's wall time bound
by the host (0.98x), so this reads the kernel time the reorder adds to a step."""
import dataclasses
import functools
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, "tools")
from bench_megatron_layers import train  # noqa: E402
from megatron_qarl.layers import enable_cuda_kernels  # noqa: E402
from megatron_qarl.models import get_preset  # noqa: E402
from megatron_qarl.quant import W4A16, ops  # noqa: E402
from megatron.core import parallel_state, tensor_parallel  # noqa: E402
from qarl_kernels.w4a16_quantize import w4a16_quantize  # noqa: E402


def main():
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29515", rank=0, world_size=1)
    torch.cuda.set_device(0)
    parallel_state.initialize_model_parallel()
    tensor_parallel.model_parallel_cuda_manual_seed(0)
    enable_cuda_kernels()
    preset = dataclasses.replace(get_preset("qwen3-30b-a3b"), num_layers=2, vocab_size=32768)
    for arm, op in (("fused lanes", w4a16_quantize),
                    ("reorder at first call", functools.partial(w4a16_quantize,
                                                                lane_order=False))):
        ops.register_quantize(W4A16, "cuda", op)
        *_, kernels = train(preset, "w4a16", "experts+attention", 4, 1024, 3, 1e-4, True,
                            profile_steps=2)
        print(f"===== {arm}: the kernels of 2 steps\n{kernels}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main()
