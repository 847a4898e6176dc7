"""Session 43: host time of an eager Gluon call with the compiled-kernel cache
(gluon_launch.CachedLaunch) and without it (Triton's JITFunction.run each call), for the W4A16
WS kernel (forward and grad_input), the W4A16 decode kernel and the FP8 WS kernel; each
cached call's output against the uncached one's; cProfile of a cached call.
Usage: launch.py [ROUNDS] (alternating rounds of 200 calls each way)."""
import cProfile
import pstats
import statistics
import sys
import time

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import fp8_grouped_ws as fp8_ws
from qarl_kernels import w4a16_gluon as wg
from qarl_kernels import w4a16_grouped_ws as ws
from qarl_kernels.bench import _fp8_weights
from qarl_kernels.fp8_quantize import fp8_quantize_activation


def per_call_us(fn, reps=200):
    """Host time a call: `reps` calls queued, then one sync (the GPU's part is shorter)."""
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    host = (time.perf_counter() - t0) / reps * 1e6
    torch.cuda.synchronize()
    return host


def uncached(module):
    kernel = module._LAUNCH.kernel
    return lambda grid, *args, **kwargs: kernel[grid](*args, **kwargs)


def main():
    w4 = get_scheme("w4a16")
    e, r = 16, 32
    q13 = w4.quantize_weight(torch.randn(e, 1536, 2048, device="cuda") * 0.05)
    q2 = w4.quantize_weight(torch.randn(e, 2048, 768, device="cuda") * 0.05)
    counts = torch.full((e, ), r, device="cuda", dtype=torch.int32)
    x2 = torch.randn(e * r, 768, device="cuda", dtype=torch.bfloat16)
    g13 = torch.randn(e * r, 1536, device="cuda", dtype=torch.bfloat16)
    x13 = torch.randn(e * r, 2048, device="cuda", dtype=torch.bfloat16)
    fp8 = get_scheme("fp8-block")
    wq, _ = _fp8_weights(fp8, e, 2048, 768)
    fcounts = torch.full((e, ), 256, device="cuda", dtype=torch.int32)
    xq, xs = fp8_quantize_activation(torch.randn(e * 256, 768, device="cuda",
                                                 dtype=torch.bfloat16))
    cases = {
        "WS forward, W2 EP8 32 rows/expert": (ws, lambda: ws.w4a16_grouped_ws(x2, q2, counts)),
        "WS grad_input, W13 EP8 32 rows/expert": (
            ws, lambda: ws.w4a16_grouped_ws_grad_input(g13, q13, counts)),
        "decode kernel, W13 EP8 32 rows/expert": (
            wg, lambda: wg.w4a16_grouped_gluon(x13, q13, counts)),
        "FP8 WS, W2 EP8 256 rows/expert": (
            fp8_ws, lambda: fp8_ws.fp8_grouped_ws(xq, xs, wq, fcounts)),
    }
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    for name, (module, fn) in cases.items():
        cached_launch, times = module._LAUNCH, {"cached": [], "uncached": []}
        cached = fn()
        module._LAUNCH = uncached(module)
        same = torch.equal(fn(), cached)
        for _ in range(rounds):  # alternating: the host's speed drifts between runs
            for mode in ("cached", "uncached"):
                module._LAUNCH = cached_launch if mode == "cached" else uncached(module)
                times[mode].append(per_call_us(fn))
        module._LAUNCH = cached_launch
        print(f"{name}: host us a call, medians of {rounds} alternating rounds (range): "
              + ", ".join(f"{mode} {statistics.median(t):.1f} ({min(t):.1f}-{max(t):.1f})"
                          for mode, t in times.items())
              + f"; same output {same}", flush=True)
    prof = cProfile.Profile()
    fn = cases["WS forward, W2 EP8 32 rows/expert"][1]
    prof.enable()
    for _ in range(200):
        fn()
    prof.disable()
    torch.cuda.synchronize()
    pstats.Stats(prof).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
