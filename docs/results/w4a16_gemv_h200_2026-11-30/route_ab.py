"""Session 59, calls 3-4: the dense op before (2925533's kernels, imported as qarl_kernels_main:
one token through w4a16_gemm's CUDA-core build) and now (one token through w4a16_gemv), beside
bf16, at attention's projections and their TP2 halves; 2 tokens as the control (the Gluon
kernel both sides). Then the GEMV's tiles at one token: rows a program and warps around
gemv_tiles' rule. CUDA graphs of 10 calls, weights rotated over copies > 2.4x L2 in every arm,
interleaved rounds (seven for the A/B, five for the tiles), medians; outputs compared.
Usage: route_ab.py (PYTHONPATH holds both packages)"""
import statistics

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.w4a16_gemm import w4a16_linear
from qarl_kernels.w4a16_gemv import gemv_tiles, w4a16_gemv
from qarl_kernels_main.w4a16_gemm import w4a16_linear as linear_before

DENSE = [("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048),
         ("o_proj TP2", 2048, 2048)]


def weights(scheme, n, k):
    master = torch.randn(n, k, device="cuda") * 0.02
    q0 = scheme.quantize_weight(master)
    qbytes = q0.data.numel() * 4 + q0.scale.numel() * 2
    qws = [q0] + [scheme.quantize_weight(master + 1e-3 * i) for i in
                  range(1, copies_for(qbytes))]
    wbs = [master.bfloat16()] + [(master + 1e-3 * i).bfloat16() for i in
                                 range(1, copies_for(n * k * 2))]
    return qws, wbs


def medians(fns, rounds):
    runs = [{name: graph_us(f, calls=STEP_CALLS) for name, f in fns.items()}
            for _ in range(rounds)]
    return {name: statistics.median(r[name] for r in runs) for name in fns}, runs


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    scheme = get_scheme("w4a16")
    for label, n, k in DENSE:
        qws, wbs = weights(scheme, n, k)
        for rows in (1, 2):
            x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            now, before = w4a16_linear(x, qws[0]), linear_before(x, qws[0])
            diff = ((now.float() - before.float()).abs().max() / before.float().abs().max()).item()
            med, runs = medians({"bf16": [lambda w=w: x @ w.t() for w in wbs],
                                 "before": [lambda q=q: linear_before(x, q) for q in qws],
                                 "now": [lambda q=q: w4a16_linear(x, q) for q in qws]}, 7)
            print(f"{label} {rows}x{n}x{k}: bf16 {med['bf16']:.2f} us, before {med['before']:.2f} "
                  f"({med['bf16'] / med['before']:.2f}x bf16), now {med['now']:.2f} "
                  f"({med['bf16'] / med['now']:.2f}x bf16): now {med['before'] / med['now']:.2f}x "
                  f"before's speed; max |now - before| / max |before| {diff:.1e}", flush=True)
            print("    before / now by round: " + " ".join(
                f"{r['before'] / r['now']:.2f}" for r in runs), flush=True)
    print("tiles at one token (block_n/block_w/warps; rule = gemv_tiles)", flush=True)
    for label, n, k in DENSE:
        qws, _ = weights(scheme, n, k)
        x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
        w = k // 8
        rule = gemv_tiles(k)
        tiles = [rule, (1, w, 1), (2, w, 1), (2, w, 2), (4, w, 1), (4, w, 2), (8, w, w // 64),
                 (16, w, w // 64), (16, w, w // 128)]
        fns = {f"{t[0]}/{t[1]}/{t[2]}w": [lambda q=q, t=t: w4a16_gemv(x, q, t) for q in qws]
               for t in tiles}
        med, _ = medians(fns, 5)
        rule_name = f"{rule[0]}/{rule[1]}/{rule[2]}w"
        print(f"{label} {n}x{k}: " + ", ".join(
            f"{name} {us:.2f} ({med[rule_name] / us:.2f}x)" for name, us in med.items()),
            flush=True)


if __name__ == "__main__":
    main()
