"""Session 39: K split in the Triton FP8 and INT8 grouped GEMMs at few rows (decode): each
scheme's decode tiles with split_k 1/2/4/8; fc1 (W13) and fc2 (W2) at EP8 in the decode batch,
EP8 under DP attention, E128 and TP2; CUDA graphs of 10 calls, weights rotated past L2, 3
routings; each output checked against the unsplit call (INT8: equal bits)."""
import statistics, sys, time
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.fp8_gemm import fp8_block_grouped_matmul, _decode_tiles
from qarl_kernels.fp8_quantize import fp8_quantize_activation
from qarl_kernels.int8_gemm import int8_matmul, int8_tiles
from qarl_kernels.int8_quantize import int8_quantize_activation
from qarl_kernels.checks import tile_rows

T0 = time.time()
SEEDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
CASES = [("W13 EP8 batch", 16, 128, 1536, 2048, (8, 16, 32, 64)),
         ("W2 EP8 batch", 16, 128, 2048, 768, (8, 32)),
         ("W13 EP8 DP", 16, None, 1536, 2048, (1, 2, 4)),
         ("W2 EP8 DP", 16, None, 2048, 768, (1, 4)),
         ("W13 E128", 128, None, 1536, 2048, (1, 2, 4)),
         ("W2 E128", 128, None, 2048, 768, (1, 4)),
         ("W13 TP2", 128, None, 768, 2048, (1, 2, 4))]
for scheme_name in ("fp8-block", "int8"):
    scheme = get_scheme(scheme_name)
    for label, e, routed, n, k, tokens in CASES:
        master = torch.randn(e, n, k, device="cuda")
        q0 = scheme.quantize_weight(master)
        nbytes = q0.data.numel() * q0.data.element_size()
        qws = [q0] + [scheme.quantize_weight(master + i) for i in range(1, copies_for(nbytes))]
        for m in tokens:
            res = {}
            for seed in range(SEEDS):
                counts = route(m, routed or e, 8, seed=seed, local=e if routed else None)
                rows = int(counts.sum())
                if rows == 0:
                    continue
                x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
                if scheme_name == "int8":
                    xq, xs = int8_quantize_activation(x)
                    base = int8_tiles(rows // e, False)
                    fn = lambda q, t: int8_matmul(xq, xs, q, counts, tiles=t)
                else:
                    xq, xs = fp8_quantize_activation(x)
                    base = _decode_tiles(rows, e, k)
                    fn = lambda q, t: fp8_block_grouped_matmul(xq, xs, q, counts, tiles=t)
                want = fn(qws[0], tuple(base) + (1,))
                for s in (1, 2, 4, 8):
                    t = tuple(base) + (s,)
                    got = [fn(qws[0], t) for _ in range(2)]
                    err = ((got[0].float() - want.float()).norm() / want.float().norm()).item()
                    if (err > 1e-3 if scheme_name != "int8" else err != 0) or not torch.equal(got[0], got[1]):
                        print("BAD", scheme_name, label, m, s, err, flush=True)
                    us = graph_us([lambda q=q: fn(q, t) for q in qws], calls=STEP_CALLS, replays=100)
                    res.setdefault(s, []).append(us)
            t1 = statistics.median(res[1])
            print(f"{scheme_name} {label} M={m} tiles {base}: " + "  ".join(
                f"s{s} {statistics.median(v):.2f} (x{t1 / statistics.median(v):.2f})" for s, v in res.items())
                + f"   [{time.time() - T0:.0f} s]", flush=True)
        del qws, master, q0
