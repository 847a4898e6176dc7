"""`python -m qarl_kernels.profile_case SHAPE M`: run one W4A16 grouped case a few times through
the op the layers call (w4a16_grouped_linear: the int4 kernels at decode sizes, the
warp-specialized one from 129 rows per expert on Hopper), for Nsight Compute (`ncu -k
regex:_w4a16_gemm_kernel --launch-skip 2 --launch-count 1 ...`, or _w4a16_grouped_ws_kernel).

SHAPE is one of qarl_kernels.bench's grouped shapes without spaces (W13E128, W2E128, W13EP8,
W2EP8, W13TP2); M is the token count (top-8 uniform routing, as in the benchmark).
"""
import argparse

import torch

from megatron_qarl.quant import get_scheme

from .bench.cases import GROUPED_SHAPES, TOP_K
from .bench.measure import route
from .w4a16_gemm import w4a16_grouped_linear
from .w4a16_quantize import w4a16_quantize

SHAPES = {label.replace(" ", ""): (e, n, k) for label, e, n, k in GROUPED_SHAPES}


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("shape", choices=sorted(SHAPES))
    p.add_argument("tokens", type=int)
    p.add_argument("--calls", type=int, default=4)
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("qarl_kernels.profile_case needs a CUDA GPU")
    e, n, k = SHAPES[args.shape]
    qweight = w4a16_quantize(torch.randn(e, n, k, device="cuda"), get_scheme("w4a16"))
    counts = route(args.tokens, e, TOP_K)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    for _ in range(args.calls):
        w4a16_grouped_linear(x, qweight, counts)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
