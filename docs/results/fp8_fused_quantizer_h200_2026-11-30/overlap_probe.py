"""Session 63, call 3 of this folder: FP8 dense calls at training sizes (cuBLAS's blockwise
scaled_mm) with the activation quantizer overlapped: x cut into row chunks, each chunk
quantized on a side stream while the main stream multiplies the chunks already quantized
(torch._scaled_mm_v2.out writing each chunk's rows of one output). Against the call as it is
(quantizer, then one GEMM), the GEMM alone and bf16; CUDA graphs of one call, weights rotated
past L2, ROUNDS interleaved rounds, medians; outputs compared with the call's.
Usage: overlap_probe.py [ROUNDS]"""
import statistics
import sys

import torch
import torch.nn.functional as F

from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.fp8_block import BLOCK, FP8_DTYPE
from qarl_kernels import fp8_quantize
from qarl_kernels.bench_setup import copies_for, graph_us
from qarl_kernels.fp8_gemm import fp8_block_linear, fp8_block_matmul, quantize_linear_input

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
SHAPES = [("1536x2048", 4096, 1536, 2048), ("1536x2048", 16384, 1536, 2048),
          ("qkv", 4096, 5120, 2048), ("o_proj", 4096, 2048, 4096), ("o_proj", 16384, 2048, 4096)]
RECIPE_A = [F.ScalingType.BlockWise1x128.value]  # as F.scaled_mm passes them
RECIPE_B = [F.ScalingType.BlockWise128x128.value]
side = torch.cuda.Stream()


def overlapped(x, qw, chunks):
    rows, k = x.shape
    kb = k // BLOCK
    step = (rows // chunks + 127) // 128 * 128
    bounds = [(a, min(a + step, rows)) for a in range(0, rows, step)]
    main = torch.cuda.current_stream()
    y = torch.empty(rows, qw.out_features, device=x.device, dtype=torch.bfloat16)
    parts = [(torch.empty(b - a, k, device=x.device, dtype=FP8_DTYPE),
              torch.empty(kb, b - a, device=x.device, dtype=torch.float32)) for a, b in bounds]
    side.wait_stream(main)
    events = []
    with torch.cuda.stream(side):
        for (a, b), (q, s) in zip(bounds, parts):
            fp8_quantize._quantize_rows(x[a:b], q, s.t(), b - a, None)
            events.append(torch.cuda.Event())
            events[-1].record(side)
    ws = qw.scale
    for (a, b), (q, s), ev in zip(bounds, parts, events):
        main.wait_event(ev)
        torch._scaled_mm_v2(q, qw.data.t(), [s.t()], RECIPE_A, [], [ws.t()], RECIPE_B, [],
                            None, torch.bfloat16, [], False, out=y[a:b])
    return y


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    scheme = get_scheme("fp8-block")
    for label, m, n, k in SHAPES:
        master = torch.randn(n, k, device="cuda") * 0.02
        wbs = [(master + 1e-3 * i).bfloat16() for i in range(copies_for(2 * n * k))]
        qws = [scheme.quantize_weight(master + 1e-3 * i) for i in range(copies_for(n * k))]
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        want = fp8_block_linear(x, qws[0])
        xq, xs = quantize_linear_input(x, qws[0])
        fns = {"bf16": [lambda w=w: x @ w.t() for w in wbs],
               "call": [lambda q=q: fp8_block_linear(x, q) for q in qws],
               "gemm": [lambda q=q: fp8_block_matmul(xq, xs, q, scaled_mm=True) for q in qws],
               "quant": [lambda q=q: quantize_linear_input(x, q) for q in qws[:1]]}
        for chunks in (2, 4, 8):
            got = overlapped(x, qws[0], chunks)
            diff = (got.float() - want.float()).abs().max().item()
            print(f"{label} {m}x{n}x{k} chunks {chunks}: max diff {diff:.3g} "
                  f"(bitwise {torch.equal(got, want)})", flush=True)
            fns[f"overlap{chunks}"] = [lambda q=q, c=chunks: overlapped(x, q, c) for q in qws]
        runs = [{name: graph_us(f) for name, f in fns.items()} for _ in range(ROUNDS)]
        med = {name: statistics.median(r[name] for r in runs) for name in fns}
        print(f"{label} {m}x{n}x{k}: " + ", ".join(
            f"{name} {t:.1f} us ({med['bf16'] / t:.2f}x bf16)" for name, t in med.items()),
            flush=True)


if __name__ == "__main__":
    main()
