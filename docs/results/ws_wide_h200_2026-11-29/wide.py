"""Session 43: the WS W4A16 kernel's wide tiles (block_m 64 or 128 token rows by 256 weight
rows, the consumers splitting the weight rows) at EP8's decode cells under DP attention (M / 2
rows an expert), against the op's decode path and bf16 torch._grouped_mm, all in CUDA graphs
of STEP_CALLS calls with weights rotated past L2 (bench's decode protocol); and where an eager
launch's host time goes."""
import sys
import time

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_grouped_ws as ws
from qarl_kernels.bench import _batch, _expert_bytes, _pct_copy, _w4a16_weights
from qarl_kernels.bench_setup import STEP_CALLS, ceilings, graph_us
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul

SHAPES = [("W13 EP8", 16, 1536, 2048), ("W2 EP8", 16, 2048, 768)]
TOKENS = [int(v) for v in sys.argv[2].split(",")] if len(sys.argv) > 2 else [64, 128, 256]
#: (block_m, rings) tried; the shared memory of each fits 227 KB
TILINGS = [(64, (2, 2, 2)), (64, (2, 3, 2)), (64, (3, 2, 2)), (128, (1, 2, 2)),
           (128, (1, 3, 2)), (128, (2, 4, 1)), (256, (2, 2, 2))]
SEEDS = 2


def time_cells():
    peak = ceilings()
    print(f"copy {peak['copy_GBps']:.0f} GB/s, bf16 {peak['bf16_TFLOPs']:.0f} TFLOP/s", flush=True)
    scheme = get_scheme("w4a16")
    for label, e, n, k in SHAPES:
        qws, bf16_t = _w4a16_weights(scheme, e, n, k)
        for m in TOKENS:
            for seed in range(SEEDS):
                counts, rows, touched, x, offs = _batch(m, e, k, 0.0, seed)
                want = scheme.reference_grouped_matmul(x, qws[0], counts.cpu()).float()
                nbytes = _expert_bytes(touched, n, k, 128, rows, True)
                t_bf = graph_us([lambda w=w: torch._grouped_mm(x, w, offs=offs) for w in bf16_t],
                                calls=STEP_CALLS)
                t_op = graph_us([lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws],
                                calls=STEP_CALLS)
                line = (f"{label} M={m} seed {seed} ({rows} rows, busiest {int(counts.max())}): "
                        f"bf16 {t_bf:.1f} us, op {t_op:.1f} ({_pct_copy(nbytes, t_op, peak):.1f}%"
                        f" BW, {t_bf / t_op:.2f}x)")
                for block_m, rings in TILINGS:
                    try:
                        got = ws.w4a16_grouped_ws(x, qws[0], counts, *rings, block_m=block_m)
                        err = ((got.float() - want).abs() - 2**-7 * want.abs()).max().item()
                        t = graph_us([lambda q=q: ws.w4a16_grouped_ws(
                            x, q, counts, *rings, block_m=block_m) for q in qws],
                            calls=STEP_CALLS)
                    except Exception as exc:  # a ring that does not fit
                        line += f"; {block_m} {rings} failed: {str(exc).splitlines()[0][:80]}"
                        continue
                    line += (f"; {block_m} {rings} {t:.1f} ({_pct_copy(nbytes, t, peak):.1f}%, "
                             f"{t_bf / t:.2f}x{'' if err <= 1e-2 else f', ERR {err:.3g}'})")
                print(line, flush=True)
        del qws, bf16_t


def host():
    """Host time per eager call, 200 calls queued then one sync (W2 EP8, 32 rows an expert),
    and its parts: the x descriptor, Triton's binding, and the compiled kernel launched
    directly (CompiledKernel[grid])."""
    import triton
    from qarl_kernels.gluon_hopper import sm_count
    from qarl_kernels.w4a16_gluon import _weight_descriptor, x_descriptor
    scheme = get_scheme("w4a16")
    e, n, k, r = 16, 2048, 768, 32
    q = scheme.quantize_weight(torch.randn(e, n, k, device="cuda") * 0.05)
    counts = torch.full((e, ), r, device="cuda", dtype=torch.int32)
    x = torch.randn(e * r, k, device="cuda", dtype=torch.bfloat16)
    y = torch.empty(e * r, n, device="cuda", dtype=torch.bfloat16)
    words = q.scale.view(torch.int32)

    def per_call(fn, reps=200):
        fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        host_us = (time.perf_counter() - t0) / reps * 1e6
        torch.cuda.synchronize()
        return host_us

    w_desc = _weight_descriptor(q, ws.BLOCK_N, 1, ws.CODE_SWIZZLE)
    x_desc = x_descriptor(x, 128, 1)
    num_tiles = 16 * 16
    grid = (min(num_tiles, sm_count(x.device)), )
    args = (x_desc, w_desc, words, y, counts, e, n, k, num_tiles, words.stride(0),
            words.stride(1), y.stride(0))
    kw = dict(E_PAD=16, X_STAGES=2, W_STAGES=2, B_STAGES=2, GRAD_INPUT=False, num_warps=4,
              maxnreg=128)
    kernel = ws._w4a16_grouped_ws_kernel
    compiled = kernel[grid](*args, **kw)
    ref = y.clone()
    launch = compiled[grid + (1, 1)]
    consts = (16, 2, 2, 2, False, 4)
    y.zero_()
    launch(*args, *consts)
    torch.cuda.synchronize()
    print(f"direct launch same output: {torch.equal(y, ref)}")
    w_bf16 = torch.randn(e, n, k, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    offs = torch.cumsum(counts, 0, dtype=torch.int32)
    device = torch.cuda.current_device()
    binder = kernel.device_caches[device][4]
    parts = {"op (w4a16_grouped_ws)": lambda: ws.w4a16_grouped_ws(x, q, counts),
             "JITFunction[grid](...)": lambda: kernel[grid](*args, **kw),
             "x_descriptor": lambda: x_descriptor(x, 128, 1),
             "binder": lambda: binder(*args, **kw),
             "CompiledKernel[grid](...)": lambda: launch(*args, *consts),
             "torch.empty": lambda: torch.empty(e * r, n, device="cuda", dtype=torch.bfloat16),
             "torch._grouped_mm (bf16)": lambda: torch._grouped_mm(x, w_bf16, offs=offs)}
    for name, fn in parts.items():
        print(f"host {name}: {min(per_call(fn) for _ in range(3)):.1f} us a call", flush=True)


if __name__ == "__main__":
    {"time": time_cells, "host": host}[sys.argv[1]]()
