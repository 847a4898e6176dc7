"""Set before anything imports Triton: @triton.jit reads TRITON_INTERPRET when a kernel is
defined, so the kernels run under Triton's CPU interpreter on machines without a GPU."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
