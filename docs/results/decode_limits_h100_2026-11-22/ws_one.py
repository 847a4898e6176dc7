import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import route
from qarl_kernels.tune import get_scheme
from qarl_kernels.w4a16_quantize import w4a16_quantize
import w4g_ws
n, k = int(sys.argv[1]), int(sys.argv[2])
e = 16
counts = route(64, e, 8)
q = w4a16_quantize(torch.randn(e, n, k, device="cuda"), get_scheme("w4a16"))
x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
for _ in range(6):
    w4g_ws.w4a16_grouped_gluon(x, q, counts, 64, 64, 3, maxnreg=80)
torch.cuda.synchronize()
