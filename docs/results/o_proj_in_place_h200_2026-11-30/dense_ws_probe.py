"""Session 58, call 2: can dense W4A16 calls from 256 tokens take the warp-specialized
kernel (w4a16_grouped_ws, the grouped op's path at 129-2047 rows an expert) as one expert?
The dense op takes the Gluon kernel in CUDA graphs up to 512 tokens and dequantize + cuBLAS
past 256 (0.75-0.91x bf16 at 256-512 and 4096 tokens, H100, round 34). At the attention
projections and their TP2 halves, 256-16384 tokens: bf16, the dense op, the WS kernel with one
expert; four weight copies rotated past L2, seven rounds interleaved in CUDA graphs of one
call, medians; outputs compared first. Usage: dense_ws_probe.py (PYTHONPATH holds
qarl_kernels)"""
import statistics

import torch

from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.base import QuantizedWeight
from qarl_kernels.bench_setup import STEP_CALLS, graph_us
from qarl_kernels.stream_floor import stream_words
from qarl_kernels.w4a16_gemm import w4a16_linear
from qarl_kernels.w4a16_grouped_ws import w4a16_grouped_ws

ROUNDS, COPIES = 7, 4
SHAPES = [("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048),
          ("o_proj TP2", 2048, 2048)]
TOKENS = [256, 512, 1024, 2048, 4096, 16384]
DECODE_TOKENS = [1, 8, 64]


def one_expert(qw):
    return QuantizedWeight(qw.data[None], qw.scale[None], (1,) + tuple(qw.shape), qw.scheme)


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    scheme = get_scheme("w4a16")
    for label, n, k in SHAPES:
        ws_ = [torch.randn(n, k, device="cuda") * 0.02 for _ in range(COPIES)]
        wbs = [w.bfloat16() for w in ws_]
        qws = [scheme.quantize_weight(w) for w in ws_]
        ones = [one_expert(q) for q in qws]
        out = torch.zeros(n // 64, device="cuda", dtype=torch.int32)
        for m in DECODE_TOKENS:  # graphs of STEP_CALLS calls, as a decode step runs them
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            for q in qws:
                w4a16_linear(x, q)
            fns = {"bf16": [lambda w=w: x @ w.t() for w in wbs],
                   "dense op": [lambda q=q: w4a16_linear(x, q) for q in qws],
                   "stream floor": [lambda q=q: stream_words(q.data, out) for q in qws]}
            runs = [{name: graph_us(f, calls=STEP_CALLS) for name, f in fns.items()}
                    for _ in range(ROUNDS)]
            med = {name: statistics.median(r[name] for r in runs) for name in fns}
            print(f"{label} decode {m}x{n}x{k}: " + ", ".join(
                f"{name} {t:.2f} us" for name, t in med.items()) +
                f"; op / bf16 speed {med['bf16'] / med['dense op']:.2f}x", flush=True)
        for m in TOKENS:
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            counts = torch.tensor([m], device="cuda", dtype=torch.int32)
            ref = w4a16_linear(x, qws[0])
            got = w4a16_grouped_ws(x, ones[0], counts)
            rel = ((got.float() - ref.float()).norm() / ref.float().norm()).item()
            fns = {"bf16": [lambda w=w: x @ w.t() for w in wbs],
                   "dense op": [lambda q=q: w4a16_linear(x, q) for q in qws],
                   "WS": [lambda o=o: w4a16_grouped_ws(x, o, counts) for o in ones]}
            for name in ("dense op", "WS"):  # eager calls made the lane codes; graphs now
                for fn in fns[name]:
                    fn()
            runs = [{name: graph_us(f) for name, f in fns.items()} for _ in range(ROUNDS)]
            med = {name: statistics.median(r[name] for r in runs) for name in fns}
            print(f"{label} {m}x{n}x{k}: WS vs op rel. diff {rel:.2e}; bf16 {med['bf16']:.1f} us, "
                  f"dense op {med['dense op']:.1f} ({med['bf16'] / med['dense op']:.2f}x), "
                  f"WS {med['WS']:.1f} ({med['bf16'] / med['WS']:.2f}x)", flush=True)
            print("    WS / op by round: " + " ".join(
                f"{r['WS'] / r['dense op']:.2f}" for r in runs), flush=True)


if __name__ == "__main__":
    main()
