"""Session 61: three eager calls each of the stream floor, the FP8 GEMM alone and the INT8 GEMM
alone at one dense cell, for ncu (-k and --launch-skip pick one call of each). Usage:
ncu_target.py SHAPE_LABEL TOKENS"""
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import DENSE_SHAPES
from qarl_kernels.fp8_gemm import fp8_block_matmul, quantize_linear_input
from qarl_kernels.int8_gemm import int8_matmul
from qarl_kernels.int8_quantize import int8_quantize_activation
from qarl_kernels.stream_floor import BLOCK_N, stream_words

label, m = sys.argv[1], int(sys.argv[2])
n, k = next((n, k) for name, n, k in DENSE_SHAPES if name == label)
master = torch.randn(n, k, device="cuda") * 0.02
f8, i8 = get_scheme("fp8-block").quantize_weight(master), get_scheme("int8").quantize_weight(master)
x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
xq, xs = quantize_linear_input(x, f8)
xq8, xs8 = int8_quantize_activation(x)
out = torch.zeros(n // BLOCK_N, device="cuda", dtype=torch.int32)
for _ in range(3):
    stream_words(f8.data.view(torch.int32), out)
    fp8_block_matmul(xq, xs, f8)
    int8_matmul(xq8, xs8, i8)
torch.cuda.synchronize()
