"""Session 29: the FP8 experts op on a padded batch, after the quantizers' grids were capped at
twice the routed rows (programs walk on): exact / padded / padded + routed_rows, as
pad_hint.py timed them (CUDA graphs of 10 calls), and torch.profiler kernel times at 32 and
128 tokens a rank (EP8)."""
import torch
from torch.profiler import ProfilerActivity, profile

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, graph_us, route
from qarl_kernels.fp8_gemm import fp8_swiglu_experts
from qarl_kernels.fp8_quantize import fp8_block_quantize

fp8 = get_scheme("fp8-block")
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
for ep, local in ((8, 16), (2, 64)):
    share = 8 * local / (128 * min(8, local))
    f1 = fp8_block_quantize(torch.randn(local, 1536, 2048, device="cuda"), fp8)
    f2 = fp8_block_quantize(torch.randn(local, 2048, 768, device="cuda"), fp8)
    for per_rank, skew in ((8, 0.0), (32, 0.0), (128, 0.0), (32, 0.5), (128, 0.5)):
        gathered = per_rank * ep
        counts = route(gathered, 128, 8, seed=1, skew=skew, local=local)
        routed, capacity = int(counts.sum()), gathered * min(8, local)
        hint = round(capacity * share)
        x = torch.randn(capacity, 2048, device="cuda", dtype=torch.bfloat16)
        probs = torch.rand(capacity, device="cuda")
        calls = {"exact": (routed, None), "padded": (capacity, None), "hint": (capacity, hint)}
        fns = {k: (lambda r=r, rr=rr: fp8_swiglu_experts(x[:r], f1, f2, counts, probs[:r],
                                                          routed_rows=rr))
               for k, (r, rr) in calls.items()}
        t = {k: graph_us([fn], calls=STEP_CALLS) for k, fn in fns.items()}
        same = torch.equal(fns["hint"]()[:routed], fns["exact"]())
        print(f"EP{ep} {per_rank}/rank skew {skew} FP8 experts, routed {routed}, capacity "
              f"{capacity}, hint {hint}: exact {t['exact']:.1f}, padded {t['padded']:.1f} "
              f"({t['padded'] / t['exact']:.2f}x), hint {t['hint']:.1f} "
              f"({t['hint'] / t['exact']:.2f}x); hint rows == exact: {same}", flush=True)
        if ep == 8 and skew == 0.0 and per_rank in (32, 128):
            for name in ("exact", "hint"):
                for _ in range(3):
                    fns[name]()
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    for _ in range(10):
                        fns[name]()
                    torch.cuda.synchronize()
                kernels = [ev for ev in prof.key_averages() if ev.device_time_total > 0
                           and "kernel" in ev.key.lower()]
                print(f"   {name}: " + ", ".join(
                    f"{ev.key[:28]} {ev.device_time_total / 10:.1f} us"
                    for ev in sorted(kernels, key=lambda e: -e.device_time_total)), flush=True)
    del f1, f2
    torch.cuda.empty_cache()
