"""Session 61: the FP8 and INT8 dense kernels' pipeline depth and warps at decode sizes, which
no sweep had varied (rounds 32 and 56 timed 4 warps, 4 stages). For each cell the rule's tiles
(each file's dense_tiles) with num_stages 2-8 and 4 or 8 warps, at the rule's K split and
twice it; the GEMM alone on activations quantized once, CUDA graphs of 10 calls, weights
rotated past L2. One round over all variants, then the four fastest and the rule re-timed in
ROUNDS interleaved rounds (medians). INT8 outputs checked bit for bit against the rule's, FP8
within 1e-2 of the largest output. Usage: stage_sweep.py [ROUNDS TOKENS...]"""
import statistics
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import DENSE_SHAPES
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.fp8_gemm import dense_tiles as fp8_tiles, fp8_block_matmul
from qarl_kernels.int8_gemm import dense_tiles as int8_tiles, int8_matmul
from qarl_kernels.int8_quantize import int8_quantize_activation
from qarl_kernels.fp8_quantize import fp8_quantize_activation
from qarl_kernels.tune import precompile

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
TOKENS = [int(t) for t in sys.argv[2:]] or [1, 16, 64, 128, 256, 384, 512]
STAGES, WARPS = (2, 3, 4, 5, 6, 8), (4, 8)
SCHEMES = {"FP8": ("fp8-block", fp8_tiles, "fp8-dense"), "INT8": ("int8", int8_tiles, "int8-dense")}


def variants(rule, k):
    bm, bn, _, _, split = rule
    splits = [split] + ([2 * split] if 2 * 2 * split * 128 <= k else [])
    return [(bm, bn, w, st, s) for s in splits for w in WARPS for st in STAGES]


def main():
    dev = torch.device("cuda")
    jobs = sorted({(kind, v, 4096) for _, n, k in DENSE_SHAPES for m in TOKENS
                   for _, tiles, kind in SCHEMES.values() for v in variants(tiles(m, n, k, dev), k)})
    print(torch.cuda.get_device_name(), torch.__version__, len(jobs), "compiles", flush=True)
    precompile(jobs, 14)
    for label, n, k in DENSE_SHAPES:
        master = torch.randn(n, k, device="cuda") * 0.02
        for name, (scheme_name, tiles, _) in SCHEMES.items():
            scheme = get_scheme(scheme_name)
            qws = [scheme.quantize_weight(master + i * 1e-3) for i in range(copies_for(n * k))]
            for m in TOKENS:
                x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
                if name == "FP8":
                    xq, xs = fp8_quantize_activation(x)
                    call = lambda q, t: fp8_block_matmul(xq, xs, q, tiles=t)  # noqa: E731
                else:
                    xq, xs = int8_quantize_activation(x)
                    call = lambda q, t: int8_matmul(xq, xs, q, tiles=t)  # noqa: E731
                rule = tiles(m, n, k, dev)
                want = call(qws[0], rule).float()
                timed = {}
                for v in variants(rule, k):
                    try:
                        got = call(qws[0], v).float()
                    except Exception as err:  # out of shared memory
                        print("skipped", v, str(err).splitlines()[0][:80], flush=True)
                        continue
                    err = float((got - want).abs().max() / want.abs().max())
                    if err > (0 if name == "INT8" else 1e-2):
                        print(f"WRONG {name} {label} M={m} {v}: {err:.1e}", flush=True)
                        continue
                    timed[v] = graph_us([lambda q=q, v=v: call(q, v) for q in qws],
                                        calls=STEP_CALLS)
                top = sorted(timed, key=timed.get)[:4]
                arms = [rule] + [v for v in top if v != rule]
                runs = [{v: graph_us([lambda q=q, v=v: call(q, v) for q in qws], calls=STEP_CALLS)
                         for v in arms} for _ in range(ROUNDS)]
                med = {v: statistics.median(r[v] for r in runs) for v in arms}
                print(f"{name} {label} {m}x{n}x{k}: rule {rule} {med[rule]:.2f} us; " + "; ".join(
                    f"{v} {med[v]:.2f} ({med[rule] / med[v]:.2f}x)" for v in arms[1:]), flush=True)
            del qws


if __name__ == "__main__":
    main()
