"""Session 59, call 2: the GEMV launched with programmatic dependent launch (its weights asked
for before it waits for the previous kernel), over tiles whose K steps take a program's whole
row (or half of it), against the dense op as it is, the Gluon kernel at one token (the route
before round 53), the stream-only floor of the same codes (stream_floor) and bf16: attention's
projections and their TP2 halves, 1-4 tokens. CUDA graphs of 10 calls, weights rotated over
copies > 2.4x L2 in every arm, three interleaved rounds, medians. Usage: pdl_probe.py"""
import statistics

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.stream_floor import BLOCK_N as FLOOR_ROWS, stream_words
from qarl_kernels.w4a16_gemm import w4a16_dense_gluon, w4a16_linear
from qarl_kernels.w4a16_gemv import w4a16_gemv

ROUNDS = 3
DENSE = [("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048),
         ("o_proj TP2", 2048, 2048)]


def configs(k):
    """(block_n, block_w, num_warps, split_k); K/8 words: a whole row in one step"""
    w = k // 8
    return [(4, w, 2, 1), (8, w, 2, 1), (8, w, 4, 1), (16, w, 4, 1), (16, w, 8, 1),
            (32, w, 8, 1), (8, w // 2, 2, 2), (16, w // 2, 4, 2), (16, 128, 4, 1),
            (8, 64, 2, 1)]


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    scheme = get_scheme("w4a16")
    for label, n, k in DENSE:
        master = torch.randn(n, k, device="cuda") * 0.02
        q0 = scheme.quantize_weight(master)
        qbytes = q0.data.numel() * 4 + q0.scale.numel() * 2
        qws = [q0] + [scheme.quantize_weight(master + 1e-3 * i) for i in
                      range(1, copies_for(qbytes))]
        wbs = [master.bfloat16()] + [(master + 1e-3 * i).bfloat16() for i in
                                     range(1, copies_for(n * k * 2))]
        floor_out = torch.empty(n // FLOOR_ROWS, dtype=torch.int32, device="cuda")
        for rows in (1, 2, 3, 4):
            x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            ref = w4a16_linear(x, qws[0]).float()
            w4a16_dense_gluon(x, qws[0])  # the eager call before capture that it asks for
            fns = {"bf16": [lambda w=w: x @ w.t() for w in wbs],
                   "op": [lambda q=q: w4a16_linear(x, q) for q in qws],
                   "gluon": [lambda q=q: w4a16_dense_gluon(x, q) for q in qws],
                   "floor": [lambda q=q: stream_words(q.data, floor_out) for q in qws]}
            diffs = {}
            for bn, bw, warps, sk in configs(k):
                name = f"gemv {bn}/{bw}/{warps}w/s{sk}"
                out = w4a16_gemv(x, qws[0], bn, bw, sk, warps).float()
                diffs[name] = ((out - ref).abs().max() / ref.abs().max()).item()
                fns[name] = [lambda q=q, c=(bn, bw, sk, warps): w4a16_gemv(x, q, *c)
                             for q in qws]
            runs = [{name: graph_us(f, calls=STEP_CALLS) for name, f in fns.items()}
                    for _ in range(ROUNDS)]
            med = {name: statistics.median(r[name] for r in runs) for name in fns}
            best = min((m for m in med if m.startswith("gemv")), key=med.get)
            print(f"{label} {rows}x{n}x{k}: bf16 {med['bf16']:.2f} us, op {med['op']:.2f} "
                  f"({med['bf16'] / med['op']:.2f}x bf16), gluon {med['gluon']:.2f}, floor "
                  f"{med['floor']:.2f}; best {best} {med[best]:.2f} ({med['bf16'] / med[best]:.2f}x "
                  f"bf16, {med['op'] / med[best]:.2f}x the op)", flush=True)
            for name in fns:
                if name.startswith("gemv"):
                    print(f"    {name}: {med[name]:.2f} us ({med['op'] / med[name]:.2f}x the "
                          f"op), max |gemv - op| / max |op| {diffs[name]:.1e}", flush=True)


if __name__ == "__main__":
    main()
