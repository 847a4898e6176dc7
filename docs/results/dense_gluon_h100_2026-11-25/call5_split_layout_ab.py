"""A/B: the dense Gluon calls of gluon_dense_tiles and the same tiles at every split, timed in
CUDA graphs of 10 calls with weights rotated past L2; run once per kernels tree (PYTHONPATH)."""
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.w4a16_gemm import gluon_dense_tiles, w4a16_dense_gluon
from qarl_kernels.w4a16_lanes import lane_codes
from qarl_kernels.w4a16_quantize import w4a16_quantize

tag = sys.argv[1]
scheme = get_scheme("w4a16-g128")
for label, n, k in [("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048),
                    ("o_proj TP2", 2048, 2048)]:
    master = torch.randn(n, k, device="cuda")
    qs = [w4a16_quantize(master + i, scheme) for i in range(copies_for(n * k // 2))]
    for q in qs:
        lane_codes(q)
    for m in (1, 8, 16, 32, 64, 128, 256):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        rule = gluon_dense_tiles(m, n, k, 132)
        want = scheme.reference_matmul(x, qs[0]).float()
        for s in (1, 2, 4, 8):
            tiles = rule[:4] + (s,)
            if k % (128 * tiles[3] * s):
                continue
            y = w4a16_dense_gluon(x, qs[0], tiles).float()
            err = ((y - want).norm() / want.norm()).item()
            us = graph_us([lambda q=q: w4a16_dense_gluon(x, q, tiles) for q in qs], replays=100,
                          calls=STEP_CALLS)
            print(f"{tag},{label},{m},{tiles},{'rule' if s == rule[4] else ''},{us:.2f},{err:.1e}",
                  flush=True)
    del qs
