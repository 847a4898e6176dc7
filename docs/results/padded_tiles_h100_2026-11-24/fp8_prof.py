"""Session 28: where the FP8 experts op's time goes when x is padded (EP8, 128 tokens a rank):
kernel times from torch.profiler for exact rows, padded, and padded + routed_rows; and the
Triton W4A16 kernel with its row loop (a capped grid) against one row tile a program."""
import torch
from torch.profiler import ProfilerActivity, profile

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import _w4a16_weights
from qarl_kernels.bench_setup import STEP_CALLS, graph_us, route
from qarl_kernels.fp8_gemm import fp8_swiglu_experts
from qarl_kernels.fp8_quantize import fp8_block_quantize
from qarl_kernels.w4a16_gemm import default_config, w4a16_grouped_matmul

fp8 = get_scheme("fp8-block")
local, ep = 16, 8
f1 = fp8_block_quantize(torch.randn(local, 1536, 2048, device="cuda"), fp8)
f2 = fp8_block_quantize(torch.randn(local, 2048, 768, device="cuda"), fp8)
for per_rank in (32, 128):
    gathered = per_rank * ep
    counts = route(gathered, 128, 8, seed=1, local=local)
    routed, capacity, hint = int(counts.sum()), gathered * 8, gathered
    x = torch.randn(capacity, 2048, device="cuda", dtype=torch.bfloat16)
    probs = torch.rand(capacity, device="cuda")
    for name, rows, rr in (("exact", routed, None), ("padded", capacity, None),
                           ("hint", capacity, hint)):
        fn = lambda: fp8_swiglu_experts(x[:rows], f1, f2, counts, probs[:rows], routed_rows=rr)
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(10):
                fn()
            torch.cuda.synchronize()
        print(f"== FP8 EP8 {per_rank}/rank {name} (rows {rows}, routed_rows {rr})", flush=True)
        for ev in sorted(prof.key_averages(), key=lambda e: -e.device_time_total)[:8]:
            print(f"   {ev.device_time_total / 10:8.1f} us/call  x{ev.count // 10}  {ev.key[:90]}",
                  flush=True)

w4 = get_scheme("w4a16")
qws, _ = _w4a16_weights(w4, local, 2048, 768)
for per_rank in (32, 128):
    gathered = per_rank * ep
    counts = route(gathered, 128, 8, seed=1, local=local)
    routed, capacity, hint = int(counts.sum()), gathered * 8, gathered
    x = torch.randn(capacity, 768, device="cuda", dtype=torch.bfloat16)
    cfg = default_config(hint, local, 2048, 768, 128)
    t = {}
    for name, rows, rr in (("exact", routed, None), ("padded full grid", capacity, capacity),
                           ("padded capped loop", capacity, hint)):
        t[name] = graph_us([lambda q=q: w4a16_grouped_matmul(x[:rows], q, counts, cfg, rr)
                            for q in qws], calls=STEP_CALLS)
    print(f"Triton W4A16 W2 EP8 {per_rank}/rank {cfg}: " + ", ".join(
        f"{k} {v:.1f}" for k, v in t.items()), flush=True)
