"""Session 50, call 8: the step times of layer_profile.py (2 exact Qwen3-30B-A3B layers, 8 x
1024 tokens, sdpa) without its profiles, after call 7's one-pass check for scheme none.
Usage: layer_times.py SCHEME..."""
import os
import sys

import torch.distributed as dist

sys.path.insert(0, "docs/results/swiglu_h200_2026-11-29")
from layer_profile import run, start  # noqa: E402

if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    start()
    for name in sys.argv[1:] * 2:
        run(name, 0)
    dist.destroy_process_group()
