"""Session 56: the Gluon kernels with the expert tables padded to a warp (gluon_hopper.table_size:
32 entries at EP8's 16 experts, where ptxas 12.8 lost the loop values' uniformity) against
505195e's (qarl_kernels_old, tables of 16). Every case is checked bit for bit against the old
kernel first, then both are timed in ROUNDS interleaved rounds, each the median.
W4A16 decode at EP8, both readings (DP attention: M tokens top-8 over the 16 experts; the
decode batch: M tokens top-8 over 128 experts, the first 16 kept), through the layers' op,
CUDA graphs of STEP_CALLS calls over rotated weight copies, % of copy bandwidth as the bench
counts it; the FP8 WS GEMM alone at EP8 and one E128 control (tables of 128 either way).
(PYTHONPATH holds qarl_kernels and qarl_kernels_old)"""
import statistics

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import STEP_CALLS, TOP_K, _batch, _expert_bytes, _pct_copy, \
    _w4a16_weights
from qarl_kernels.bench_setup import ceilings, graph_us, route
from qarl_kernels.fp8_grouped_ws import fp8_grouped_ws
from qarl_kernels.fp8_quantize import fp8_block_quantize, fp8_quantize_activation
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul
from qarl_kernels_old.fp8_grouped_ws import fp8_grouped_ws as old_fp8
from qarl_kernels_old.w4a16_gemm import w4a16_grouped_matmul as old_w4a16

ROUNDS = 7


def ab(fns):
    times = {name: [] for name in fns}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            times[name].append(fn())
    return {name: statistics.median(v) for name, v in times.items()}


peak = ceilings()
print(torch.cuda.get_device_name(), f"copy {peak['copy_GBps']:.0f} GB/s", flush=True)
scheme = get_scheme("w4a16")
for label, n, k in (("W13", 1536, 2048), ("W2", 2048, 768)):
    qws, _ = _w4a16_weights(scheme, 16, n, k)
    for reading, routed in (("DP attention", None), ("decode batch", 128)):
        for m in (8, 64, 128, 256):
            counts, rows, touched, x, _ = _batch(m, 16, k, routed=routed)
            assert torch.equal(w4a16_grouped_matmul(x, qws[0], counts),
                               old_w4a16(x, qws[0], counts)), (label, reading, m)
            med = ab({name: (lambda f=f: graph_us([lambda q=q: f(x, q, counts) for q in qws],
                                                  calls=STEP_CALLS))
                      for name, f in (("old", old_w4a16), ("new", w4a16_grouped_matmul))})
            nbytes = _expert_bytes(touched, n, k, 128, rows, True)
            print(f"W4A16 {label} EP8 {reading} M={m}: old {med['old']:.2f} us "
                  f"({_pct_copy(nbytes, med['old'], peak):.1f}%), new {med['new']:.2f} us "
                  f"({_pct_copy(nbytes, med['new'], peak):.1f}%), new/old "
                  f"{med['new'] / med['old']:.3f}", flush=True)
    del qws
fp8 = get_scheme("fp8-block")
for label, e, n, k in (("W13 EP8", 16, 1536, 2048), ("W2 EP8", 16, 2048, 768),
                       ("W13 E128", 128, 1536, 2048)):
    qw = fp8_block_quantize(torch.randn(e, n, k, device="cuda"), fp8)
    for tokens in (1024, 4096, 16384):
        counts = route(tokens, e, TOP_K)
        xq, xs = fp8_quantize_activation(torch.randn(int(counts.sum()), k, device="cuda",
                                                     dtype=torch.bfloat16))
        assert torch.equal(fp8_grouped_ws(xq, xs, qw, counts), old_fp8(xq, xs, qw, counts))
        med = ab({name: (lambda f=f: graph_us([lambda: f(xq, xs, qw, counts)], 20))
                  for name, f in (("old", old_fp8), ("new", fp8_grouped_ws))})
        print(f"FP8 GEMM {label} M={tokens}: old {med['old']:.1f} us, new {med['new']:.1f} us, "
              f"new/old {med['new'] / med['old']:.3f}", flush=True)
