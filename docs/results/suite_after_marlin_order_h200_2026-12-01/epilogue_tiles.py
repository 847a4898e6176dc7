"""fc2 with router probs (W4A16) on tiles forced in place of gluon_tiles' choice (the rest of
the rules' launch as w4a16_grouped_matmul makes it), CUDA graphs of 10 calls, routing seed 1:
which tiles the shared-memory prob epilogue helps (session 71 call 4; run once per tree).
Call 5: argv[2] "confirm", W2 at EP8 about 128 rows an expert, three routings, with and without
probs."""
import sys

import torch

from qarl_kernels import w4a16_gemm
from qarl_kernels.bench.cases import ROUTED_EXPERTS, routed_batch, w4a16_weights
from qarl_kernels.bench.measure import STEP_CALLS, graph_output, graph_us
from megatron_qarl.quant import get_scheme

tag = sys.argv[1]
scheme = get_scheme("w4a16")
confirm = sys.argv[2:] == ["confirm"]
TILES = [(32, 128, 3), (64, 128, 2), (64, 128, 3), (128, 128, 2), (64, 64, 2), (32, 128, 2)]
CASES = [("W2 EP8", 16, 256, 1), ("W2 EP8", 16, 192, 1), ("W2 EP8, TP attention", 16, 256, 1),
         ("W2 E128", 128, 1024, 1), ("W2 EP8", 16, 64, 1)]
if confirm:
    TILES = [(64, 128, 2), (64, 128, 3), (64, 64, 2), (128, 128, 2)]
    CASES = [("W2 EP8", 16, m, seed) for m in (224, 256, 288) for seed in range(3)]
for label, e, m, seed in CASES:
    n, k = 2048, 768
    qws, _ = w4a16_weights(scheme, e, n, k)
    counts, rows, _, x, _ = routed_batch(m, e, k, seed=seed, routed=ROUTED_EXPERTS.get(label))
    probs = torch.rand(rows, device="cuda")
    cells = []
    for tiles in TILES:
        w4a16_gemm.gluon_tiles = lambda *a, tiles=tiles, **kw: tiles + (None, None)
        try:
            want = graph_output(lambda: w4a16_gemm.w4a16_grouped_matmul(x, qws[0], counts))
            got = graph_output(lambda: w4a16_gemm.w4a16_grouped_matmul(x, qws[0], counts,
                                                                       probs=probs))
            ok = torch.equal(got, want * probs.bfloat16().unsqueeze(-1))
            t = graph_us([lambda q=q: w4a16_gemm.w4a16_grouped_matmul(x, q, counts, probs=probs)
                          for q in qws], calls=STEP_CALLS)
            cells.append(f"{tiles}: {t:.2f}{'' if ok else ' MISMATCH'}")
            if confirm:  # and without probs (the decode tables' fc2)
                t = graph_us([lambda q=q: w4a16_gemm.w4a16_grouped_matmul(x, q, counts)
                              for q in qws], calls=STEP_CALLS)
                cells[-1] += f" ({t:.2f} without)"
        except Exception as err:
            cells.append(f"{tiles}: failed {str(err).splitlines()[0][:80]}")
    print(f"{tag} | {label} M={m} seed {seed} | " + " | ".join(cells), flush=True)
