"""The bench's fused-fc1 timing (bench.bench_swiglu: seed-0 uniform routing, its weights and
rotation), with w4a16_gemm.gluon_x_async as the rule has it and forced off, alternating 5
rounds: us per call (CUDA graphs of 10 calls)."""
import statistics
import torch
from qarl_kernels import bench, w4a16_gemm
from qarl_kernels.bench_setup import STEP_CALLS, graph_us
from megatron_qarl.quant import get_scheme

rule = w4a16_gemm.gluon_x_async
scheme = get_scheme("w4a16")
for label, e, n, k in [s for s in bench.GROUPED_SHAPES if s[0].startswith("W13")]:
    qws, _ = bench._w4a16_weights(scheme, e, n, k)
    for m in (1, 8, 16):
        counts, rows, _, x, _ = bench._batch(m, e, k)
        probs = torch.rand(rows, device="cuda")
        res = {"rule": [], "off": []}
        for _ in range(5):
            for mode in ("rule", "off"):
                w4a16_gemm.gluon_x_async = rule if mode == "rule" else (lambda *a, **kw: False)
                res[mode].append(graph_us([lambda q=q: w4a16_gemm.w4a16_grouped_swiglu(
                    x, q, counts, probs) for q in qws], calls=STEP_CALLS))
        w4a16_gemm.gluon_x_async = rule
        print(f"{label} M={m} x_async={rule(rows, e, n, k, swiglu=True)}: "
              + " | ".join(f"{k2} median {statistics.median(v):.2f} ({' '.join(f'{u:.1f}' for u in v)})"
                           for k2, v in res.items()), flush=True)
    del qws
