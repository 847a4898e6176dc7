"""Session 47, calls 5 and 6: the GPU kernels of two training steps of 2 exact Qwen3-30B-A3B layers
(vocabulary 32768, batch 4 x 1024, W4A16 experts+attention), the quantizer writing the lane
order against the reorder at the kernels' first call: call 4 found the step's wall time bound
by the host (0.98x), so this reads the kernel time the reorder adds to a step. Call 5 ran it at
2da783c, setting quant.ops' registry alone: both arms ran the default quantizer (step_ab.py).
Call 6 sets the op through step_ab.use_op."""
import functools
import os
import sys

import torch.distributed as dist

sys.path.insert(0, "tools")
from bench_megatron_layers import train  # noqa: E402
from qarl_kernels.w4a16_quantize import w4a16_quantize  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from step_ab import qwen3_30b_layers, start, use_op  # noqa: E402


def main():
    start()
    preset = qwen3_30b_layers(2)
    for arm, op in (("fused lanes", w4a16_quantize),
                    ("reorder at first call", functools.partial(w4a16_quantize,
                                                                lane_order=False))):
        use_op("w4a16_quantize", op)
        *_, kernels = train(preset, "w4a16", "experts+attention", 4, 1024, 3, 1e-4, True,
                            profile_steps=2)
        print(f"===== {arm}: the kernels of 2 steps\n{kernels}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main()
