"""Session 42: the WS W4A16 kernel's grad_input mode (y = grad_out @ dequant(W)) against
dequantize + torch._grouped_mm (the backward's path so far), bf16 torch._grouped_mm on the bf16
weight (the bf16 learner's grad_input) and _grouped_mm on a kept operand; and the forward mode
against round 37's kernel (.gl copy, imported as qarl_kernels.w4a16_grouped_ws_r37). do_bench
medians, weights rotated past L2. `check` runs ragged shapes against the fp32 reference."""
import sys
import time

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_grouped_ws as ws
from qarl_kernels.bench import _w4a16_weights
from qarl_kernels.bench_setup import ceilings, graph_us, median_us
from qarl_kernels.w4a16_dequantize import w4a16_dequantize

SHAPES = [("W13 E128", 128, 1536, 2048), ("W2 E128", 128, 2048, 768),
          ("W13 TP2", 128, 768, 2048), ("W13 EP8", 16, 1536, 2048), ("W2 EP8", 16, 2048, 768)]
ROWS_PER_EXPERT = [int(v) for v in sys.argv[2].split(",")] if len(sys.argv) > 2 else \
    [32, 64, 128, 256, 512, 1024, 2048]


def check():
    scheme = get_scheme("w4a16")
    cases = [(8, 256, 512, [0, 130, 0, 257, 1, 256, 0, 600]), (4, 384, 768, [129, 0, 64, 255]),
             (3, 128, 2048, [512, 0, 1]), (2, 128, 256, [1, 0]),
             (128, 1536, 2048, [64] * 128), (16, 2048, 768, [300] * 16)]
    for e, n, k, counts in cases:
        torch.manual_seed(0)
        q = scheme.quantize_weight(torch.randn(e, n, k, device="cuda") * 0.05)
        tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
        g = torch.randn(sum(counts), n, device="cuda").bfloat16()
        got = ws.w4a16_grouped_ws_grad_input(g, q, tokens)
        w = scheme.dequantize(q).bfloat16().float()
        want = torch.cat([ge.float() @ w[i] for i, ge in enumerate(torch.split(g, counts))])
        err = ((got.float() - want).abs() - (2**-7) * want.abs()).max().item()
        wrong = sum(not torch.equal(ws.w4a16_grouped_ws_grad_input(g, q, tokens), got)
                    for _ in range(50))
        print(f"check grad_input e={e} n={n} k={k}: {err:.3g} "
              f"({'OK' if err <= 1e-2 else 'BAD'}), calls not repeating its bits: {wrong}/50",
              flush=True)


def time_all():
    peak = ceilings()
    print(f"copy {peak['copy_GBps']:.0f} GB/s, bf16 {peak['bf16_TFLOPs']:.0f} TFLOP/s", flush=True)
    scheme = get_scheme("w4a16")
    for label, e, n, k in SHAPES:
        qws, bf16_t = _w4a16_weights(scheme, e, n, k)
        bf16_w = [w.transpose(1, 2) for w in bf16_t]  # [E, n, k] as the masters are
        kept = w4a16_dequantize(qws[0])
        for r in ROWS_PER_EXPERT:
            counts = torch.full((e, ), r, device="cuda", dtype=torch.int32)
            offs = torch.cumsum(counts, 0, dtype=torch.int32)
            g = torch.randn(e * r, n, device="cuda", dtype=torch.bfloat16)
            ref = torch._grouped_mm(g, kept, offs=offs).float()
            got = ws.w4a16_grouped_ws_grad_input(g, qws[0], counts).float()
            err = ((got - ref).abs() - 2**-7 * ref.abs()).max().item()
            t_bf = median_us([lambda w=w: torch._grouped_mm(g, w, offs=offs) for w in bf16_w])
            t_dq = median_us([lambda q=q: torch._grouped_mm(g, w4a16_dequantize(q, counts),
                                                            offs=offs) for q in qws])
            t_kept = median_us([lambda: torch._grouped_mm(g, kept, offs=offs)])
            t_ws = median_us([lambda q=q: ws.w4a16_grouped_ws_grad_input(g, q, counts)
                              for q in qws])
            flop = 2 * e * r * n * k
            print(f"grad_input {label} {r} rows/expert: bf16 {t_bf:.1f} us, dequant+grouped_mm "
                  f"{t_dq:.1f} ({t_dq / t_bf:.2f}x), kept {t_kept:.1f} ({t_kept / t_bf:.2f}x), "
                  f"WS {t_ws:.1f} ({t_ws / t_bf:.2f}x, {flop / t_ws / 1e6:.0f} TFLOP/s, "
                  f"{t_dq / t_ws:.2f}x faster than dequant), err {err:.3g}", flush=True)


def forward_regression():
    """The forward mode against round 37's kernel at the M=4096 cells of round 37."""
    from qarl_kernels import w4a16_grouped_ws_r37 as old
    from qarl_kernels.bench import _batch
    scheme = get_scheme("w4a16")
    for label, e, n, k in SHAPES[:3]:
        qws, bf16_t = _w4a16_weights(scheme, e, n, k)
        counts, rows, _, x, offs = _batch(4096, e, k)
        same = torch.equal(ws.w4a16_grouped_ws(x, qws[0], counts),
                           old.w4a16_grouped_ws(x, qws[0], counts))
        for rnd in range(int(sys.argv[2]) if len(sys.argv) > 2 else 1):  # alternating rounds
            t_bf = median_us([lambda w=w: torch._grouped_mm(x, w, offs=offs) for w in bf16_t])
            t_old = median_us([lambda q=q: old.w4a16_grouped_ws(x, q, counts) for q in qws])
            t_new = median_us([lambda q=q: ws.w4a16_grouped_ws(x, q, counts) for q in qws])
            print(f"forward {label} M=4096 (round {rnd}): bf16 {t_bf:.1f} us, round 37 "
                  f"{t_old:.1f} ({t_old / t_bf:.2f}x), now {t_new:.1f} ({t_new / t_bf:.2f}x), "
                  f"same bits {same}", flush=True)


def launch_cost():
    """Host time per call (200 calls queued, then one sync) against the GPU's time per call in
    CUDA graphs, at EP8's few tiles, where do_bench may time the host."""
    scheme = get_scheme("w4a16")
    for label, e, n, k in SHAPES[3:]:
        qws, _ = _w4a16_weights(scheme, e, n, k)
        kept = w4a16_dequantize(qws[0])
        for r in (32, 64, 256):
            counts = torch.full((e, ), r, device="cuda", dtype=torch.int32)
            offs = torch.cumsum(counts, 0, dtype=torch.int32)
            g = torch.randn(e * r, n, device="cuda", dtype=torch.bfloat16)
            calls = {"WS": lambda: ws.w4a16_grouped_ws_grad_input(g, qws[0], counts),
                     "dequant+grouped_mm": lambda: torch._grouped_mm(
                         g, w4a16_dequantize(qws[0], counts), offs=offs),
                     "kept": lambda: torch._grouped_mm(g, kept, offs=offs)}
            for name, fn in calls.items():
                fn()
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(200):
                    fn()
                host = (time.perf_counter() - t0) / 200 * 1e6
                torch.cuda.synchronize()
                print(f"launch {label} {r} rows/expert {name}: host {host:.1f} us a call, "
                      f"graph {graph_us([fn], calls=10):.1f} us", flush=True)


def host_profile():
    """Where an eager call's host time goes: cProfile of 200 grad_input and 200 forward calls
    of the WS kernel at W13 EP8, 32 rows an expert (the GPU's part is 33 us in graphs)."""
    import cProfile
    import pstats
    scheme = get_scheme("w4a16")
    q = scheme.quantize_weight(torch.randn(16, 1536, 2048, device="cuda") * 0.05)
    counts = torch.full((16, ), 32, device="cuda", dtype=torch.int32)
    g = torch.randn(16 * 32, 1536, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(16 * 32, 2048, device="cuda", dtype=torch.bfloat16)
    for fn in (lambda: ws.w4a16_grouped_ws_grad_input(g, q, counts),
               lambda: ws.w4a16_grouped_ws(x, q, counts)):
        fn()
        torch.cuda.synchronize()
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(200):
            fn()
        prof.disable()
        torch.cuda.synchronize()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(22)


def n64_against_n128():
    """grad_input with two n = 64 accumulators (call 1's build, .gl copy imported as
    qarl_kernels.w4a16_grouped_ws_n64) against one n = 128 over the stage's two halves, in
    alternating rounds."""
    from qarl_kernels import w4a16_grouped_ws_n64 as n64
    scheme = get_scheme("w4a16")
    for label, e, n, k in SHAPES:
        qws, bf16_t = _w4a16_weights(scheme, e, n, k)
        bf16_w = [w.transpose(1, 2) for w in bf16_t]
        for r in ((64, 256, 512) if e == 128 else (512, )):
            counts = torch.full((e, ), r, device="cuda", dtype=torch.int32)
            offs = torch.cumsum(counts, 0, dtype=torch.int32)
            g = torch.randn(e * r, n, device="cuda", dtype=torch.bfloat16)
            same = torch.equal(ws.w4a16_grouped_ws_grad_input(g, qws[0], counts),
                               n64.w4a16_grouped_ws_grad_input(g, qws[0], counts))
            for rnd in range(2):
                t_bf = median_us([lambda w=w: torch._grouped_mm(g, w, offs=offs)
                                  for w in bf16_w])
                t64 = median_us([lambda q=q: n64.w4a16_grouped_ws_grad_input(g, q, counts)
                                 for q in qws])
                t128 = median_us([lambda q=q: ws.w4a16_grouped_ws_grad_input(g, q, counts)
                                  for q in qws])
                print(f"grad_input {label} {r} rows/expert (round {rnd}): bf16 {t_bf:.1f} us, "
                      f"n64 {t64:.1f} ({t64 / t_bf:.2f}x), n128 {t128:.1f} "
                      f"({t128 / t_bf:.2f}x), same bits {same}", flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S"), flush=True)
    {"check": check, "time": time_all, "forward": forward_regression,
     "launch": launch_cost, "host": host_profile, "n128": n64_against_n128}[sys.argv[1]]()
