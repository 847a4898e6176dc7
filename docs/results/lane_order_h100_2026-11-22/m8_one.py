"""One decode case through the grouped op (eager: the Gluon tiles given explicitly), for ncu.
usage: python m8_one.py E N K M BM BN ST [MAXNREG]"""
import sys
import torch
from qarl_kernels.bench_setup import route
from qarl_kernels.tune import get_scheme
from qarl_kernels.w4a16_quantize import w4a16_quantize
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
e, n, k, m, bm, bn, st = map(int, sys.argv[1:8])
reg = int(sys.argv[8]) if len(sys.argv) > 8 else None
counts = route(m, e, 8)
q = w4a16_quantize(torch.randn(e, n, k, device="cuda"), get_scheme("w4a16"))
x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
for _ in range(6):
    w4a16_grouped_gluon(x, q, counts, bm, bn, st, reg)
torch.cuda.synchronize()
