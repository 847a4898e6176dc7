"""Host cost per call of the W4A16 grouped GEMM paths (eager), and where it goes."""
import cProfile, pstats, time, torch
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import _w4a16_weights, _batch
from qarl_kernels.w4a16_gemm import _launch, w4a16_grouped_matmul
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
q = _w4a16_weights(get_scheme("w4a16"), 16, 1536, 2048)[0][0]
counts, rows, _, x, _ = _batch(64, 16, 2048)
c = counts.cuda()
def per_call(fn, n=300):
    fn(); torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    host = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t) / n * 1e6
    return host, wall
for name, fn in [("triton _launch", lambda: _launch(x, q, c, 16, False, None)),
                 ("gluon direct", lambda: w4a16_grouped_gluon(x, q, c, 64, 128, 3)),
                 ("op (gluon route)", lambda: w4a16_grouped_matmul(x, q, counts))]:
    h, w = per_call(fn)
    print(f"{name}: host {h:.1f} us/call, wall {w:.1f} us/call", flush=True)
pr = cProfile.Profile(); pr.enable()
for _ in range(200):
    w4a16_grouped_gluon(x, q, c, 64, 128, 3)
pr.disable(); torch.cuda.synchronize()
pstats.Stats(pr).sort_stats("tottime").print_stats(14)
