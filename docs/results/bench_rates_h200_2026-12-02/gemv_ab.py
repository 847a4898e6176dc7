"""The one-token dense W4A16 call of 8491af8's kernels (session 62's dense run: o_proj TP2 6.2
us) against this tree's, in one process, interleaved, same copies and graphs as the bench."""
import statistics
import sys

import torch

sys.path.insert(0, "/tmp/oldpp")
import qarl_kernels_old.w4a16_gemm as old_gemm  # noqa: E402
from megatron_qarl.quant import get_scheme  # noqa: E402
from qarl_kernels.bench.measure import STEP_CALLS, copies_for, graph_us  # noqa: E402
from qarl_kernels.w4a16_gemm import w4a16_linear  # noqa: E402
from qarl_kernels.w4a16_quantize import w4a16_quantize  # noqa: E402

scheme = get_scheme("w4a16-g128")
for label, n, k in [("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048),
                    ("o_proj TP2", 2048, 2048)]:
    master = torch.randn(n, k, device="cuda")
    q4 = [w4a16_quantize(master + i, scheme) for i in range(copies_for(n * k // 2))]
    wb = [(master + i).bfloat16() for i in range(copies_for(2 * n * k))]
    x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
    assert torch.equal(old_gemm.w4a16_linear(x, q4[0]), w4a16_linear(x, q4[0]))
    t = {"bf16": [], "old": [], "new": []}
    for _ in range(3):
        t["old"].append(graph_us([lambda q=q: old_gemm.w4a16_linear(x, q) for q in q4],
                                 calls=STEP_CALLS))
        t["new"].append(graph_us([lambda q=q: w4a16_linear(x, q) for q in q4], calls=STEP_CALLS))
        t["bf16"].append(graph_us([lambda w=w: x @ w.t() for w in wb], calls=STEP_CALLS))
    print(label, {k: " ".join(f"{v:.2f}" for v in vs) for k, vs in t.items()},
          f"old/new {statistics.median(t['old']) / statistics.median(t['new']):.2f}", flush=True)
