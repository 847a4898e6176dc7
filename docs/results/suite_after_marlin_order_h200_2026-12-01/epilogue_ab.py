"""fc2 with router probs (W4A16, the rules' Gluon launch through w4a16_grouped_matmul) at the
decode sizes whose tiles differ, in CUDA graphs of 10 calls: run once per tree on PYTHONPATH
(session 71 call 3, the shipped register epilogue against session 70 call 2's shared-memory one).
Prints us per call, median of three routings' means."""
import statistics
import sys

import torch

from qarl_kernels.bench.cases import ROUTED_EXPERTS, routed_batch, w4a16_weights
from qarl_kernels.bench.measure import STEP_CALLS, graph_output, graph_us
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul
from qarl_kernels.w4a16_gluon_rules import gluon_tiles
from megatron_qarl.quant import get_scheme

tag = sys.argv[1]
scheme = get_scheme("w4a16")
for label, e, m in [("W2 EP8", 16, 256), ("W2 EP8, TP attention", 16, 256), ("W2 EP8", 16, 128),
                    ("W2 E128", 128, 256), ("W2 EP8", 16, 64), ("W2 E128", 128, 64)]:
    n, k = 2048, 768
    qws, _ = w4a16_weights(scheme, e, n, k)
    times = []
    for seed in range(3):
        counts, rows, _, x, _ = routed_batch(m, e, k, seed=seed, routed=ROUTED_EXPERTS.get(label))
        probs = torch.rand(rows, device="cuda")
        # Marlin's form on the kernel's own unscaled sums (the bits both epilogues must give)
        want = graph_output(lambda: w4a16_grouped_matmul(x, qws[0], counts))
        want = want * probs.bfloat16().unsqueeze(-1)
        assert torch.equal(graph_output(lambda: w4a16_grouped_matmul(x, qws[0], counts,
                                                                    probs=probs)), want)
        times.append(graph_us([lambda q=q: w4a16_grouped_matmul(x, q, counts, probs=probs)
                               for q in qws], calls=STEP_CALLS))
    tiles = gluon_tiles(rows, e, n, k)
    print(f"{tag} | {label} | M={m} | tiles {tiles} | {statistics.median(times):.2f} us | "
          + " ".join(f"{t:.2f}" for t in times), flush=True)
