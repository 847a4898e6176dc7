"""`python -m qarl_kernels.tune`: time tile configs of the W4A16, FP8 and INT8 kernels on the
GPU and print the winner per (shape, tokens) bucket, to hard-code in `default_config`,
`w4a16_gluon_rules.gluon_tiles` / `gluon_swiglu_tiles`, `fp8_gemm._tiles`,
`fp8_grouped_ws.default_tiles`, `int8_gemm.int8_tiles` and the dense rules
(`fp8_gemm.dense_tiles`, `int8_gemm.dense_tiles`, `split_k.decode_tiles`; `--only dense`).
Nothing autotunes at run time, so CI and graphs see fixed tiles.

Kernels are compiled first in parallel worker processes (Triton's on-disk cache is shared),
so a sweep of ~40 configs fits in one short GPU lease.
"""
import argparse
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import torch

from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.ops import reference_gated_activation

from .bench.cases import DENSE_SHAPES, W4A16Copies
from .bench.measure import DECODE_MAX_TOKENS, STEP_CALLS, copies_for, graph_us, median_us, route
from .fp8_gemm import (dense_tiles as fp8_dense_tiles, fp8_block_grouped_linear,
                       fp8_block_matmul, quantize_linear_input, scaled_mm_applies,
                       scaled_mm_supports)
from .fp8_grouped_ws import fp8_grouped_ws
from .fp8_quantize import fp8_block_quantize, fp8_quantize_activation
from .int8_gemm import dense_tiles as int8_dense_tiles, int8_grouped_linear, int8_matmul
from .int8_quantize import int8_quantize_activation
from .w4a16_gemm import W4A16Config, default_config, w4a16_grouped_matmul
from .w4a16_gluon import w4a16_grouped_gluon
from .w4a16_gluon_rules import gluon_launch, gluon_refill_first
from .w4a16_quantize import w4a16_quantize

TOP_K = 8
C = W4A16Config
DECODE = [C(16, 64, 256), C(16, 64, 512), C(16, 128, 512), C(16, 128, 512, num_warps=8),
          C(16, 64, 512, num_stages=4), C(16, 32, 512), C(16, 64, 1024, num_stages=2),
          C(16, 64, 512, split_k=2), C(16, 32, 512, split_k=2),
          C(16, 128, 512, num_warps=8, num_stages=4), C(16, 128, 256, num_warps=8, num_stages=4),
          C(16, 256, 512, num_warps=8), C(16, 256, 256, num_warps=8, num_stages=4),
          C(16, 128, 1024, num_warps=8, num_stages=2), C(16, 128, 512, split_k=2, num_warps=8),
          C(16, 64, 512, num_warps=8), C(32, 128, 512, num_warps=8),
          C(32, 128, 256), C(32, 128, 256, num_stages=4)]
MID = [C(32, 64, 512), C(32, 128, 512), C(64, 128, 512, num_warps=8), C(64, 64, 512),
       C(64, 128, 256, num_stages=4), C(128, 128, 256, num_warps=8), C(32, 64, 512, split_k=2),
       C(64, 128, 512, num_warps=8, num_stages=2),
       C(32, 128, 256, num_stages=3), C(64, 64, 256, num_stages=3),
       C(32, 64, 256, num_stages=4), C(128, 64, 256, num_warps=8, num_stages=2),
       C(64, 128, 256, num_warps=8), C(32, 128, 256, num_warps=8),
       C(32, 128, 256, num_warps=8, num_stages=4),
       C(32, 256, 256, num_warps=8), C(16, 128, 256, num_warps=8, num_stages=3),
       C(128, 64, 256, num_stages=3), C(128, 64, 256, num_warps=8, num_stages=3),
       C(64, 128, 256), C(64, 64, 256, num_warps=8), C(128, 128, 256, num_warps=8, num_stages=4),
       # 128-input K steps: half the unpacked operand in registers (more CTAs per SM)
       C(32, 128, 128), C(32, 128, 128, num_warps=8), C(32, 64, 128), C(64, 64, 128),
       C(64, 128, 128), C(64, 128, 128, num_warps=8), C(128, 64, 128, num_warps=8),
       C(128, 128, 128, num_warps=8), C(128, 64, 128), C(32, 128, 128, num_stages=4),
       C(16, 128, 128, num_warps=8), C(64, 64, 128, num_stages=4),
       # split K: more programs for grids of ~1.5 CTAs per SM (EP8)
       C(64, 128, 128, split_k=2), C(64, 64, 128, split_k=2), C(32, 128, 128, split_k=2),
       C(128, 128, 256, num_warps=8, split_k=2), C(128, 64, 128, num_warps=8, split_k=2)]
LARGE = [C(128, 128, 256, num_warps=8), C(128, 128, 128, num_warps=8),
         C(256, 128, 128, num_warps=8), C(128, 256, 128, num_warps=8)]
# (label, experts, N, K, tokens, config lists)
W4A16_CASES = [
    ("W13 E128", 128, 1536, 2048, 1, [DECODE]), ("W13 E128", 128, 1536, 2048, 8, [DECODE]),
    ("W13 E128", 128, 1536, 2048, 64, [DECODE]),
    ("W13 E128", 128, 1536, 2048, 256, [DECODE, MID]),
    ("W13 E128", 128, 1536, 2048, 4096, [LARGE]),
    ("W2 E128", 128, 2048, 768, 1, [DECODE]), ("W2 E128", 128, 2048, 768, 8, [DECODE]),
    ("W2 E128", 128, 2048, 768, 64, [DECODE]), ("W2 E128", 128, 2048, 768, 256, [DECODE, MID]),
    ("W2 E128", 128, 2048, 768, 4096, [LARGE]),
    ("W13 EP8", 16, 1536, 2048, 8, [DECODE]), ("W13 EP8", 16, 1536, 2048, 64, [DECODE, MID]),
    ("W13 EP8", 16, 1536, 2048, 256, [MID]), ("W13 EP8", 16, 1536, 2048, 4096, [LARGE]),
    ("W13 EP8", 16, 1536, 2048, 128, [MID]), ("W13 EP8", 16, 1536, 2048, 32, [DECODE, MID]),
    ("W13 TP2", 128, 768, 2048, 64, [DECODE, MID]), ("W13 TP2", 128, 768, 2048, 256, [DECODE, MID]),
    ("W2 EP8", 16, 2048, 768, 8, [DECODE]), ("W2 EP8", 16, 2048, 768, 64, [DECODE, MID]),
    ("W2 EP8", 16, 2048, 768, 256, [MID]),
]
#: (block_m, block_n, stages, register cap) of the Gluon W4A16 kernel, and the cases of
#: w4a16_gluon_rules.gluon_tiles
GLUON_TILES = [(bm, bn, st, None) for bm in (8, 16, 32, 64, 128) for bn in (64, 128)
               for st in (2, 3, 4) if st < 4 or bm <= 16] + [  # register caps: one more CTA
    (bm, 128, st, r) for bm in (8, 16, 32) for st in (2, 3) for r in (96, 128)]  # per SM
GLUON_CASES = [("W13 EP8", 16, 1536, 2048, m) for m in (1, 8, 16, 32, 64, 128, 192, 256)] + [
    ("W2 EP8", 16, 2048, 768, m) for m in (1, 8, 16, 32, 64, 128, 192, 256)] + [
    ("W13 E128", 128, 1536, 2048, m) for m in (1, 8, 64, 128, 256, 1024)] + [
    ("W2 E128", 128, 2048, 768, m) for m in (1, 4, 8, 16, 64, 128, 256, 512, 1024)] + [
    ("W13 TP2", 128, 768, 2048, m) for m in (1, 8, 64, 256)] + [
    # EP2's 64 local experts, 1-16 rows an expert (session 28)
    (f"{w} E64", 64, n, k, m) for w, n, k in (("W13", 1536, 2048), ("W2", 2048, 768))
    for m in (8, 32, 64, 128)]
FP8_TILES = [(128, 128, 8, 3), (128, 128, 4, 3), (128, 128, 8, 4), (64, 128, 4, 4),
             (128, 256, 8, 3), (64, 256, 8, 3), (128, 64, 4, 4), (256, 128, 8, 3)]
#: (block_n, stages) of the warp-specialized Gluon kernel (fp8_grouped_ws.default_tiles)
FP8_WS_TILES = [(256, 3), (256, 2), (128, 5), (128, 4), (128, 3)]
FP8_CASES = [("W13 E128", 128, 1536, 2048, 4096), ("W13 E128", 128, 1536, 2048, 16384),
             ("W2 E128", 128, 2048, 768, 4096), ("W2 E128", 128, 2048, 768, 16384),
             ("W13 EP8", 16, 1536, 2048, 4096), ("W2 EP8", 16, 2048, 768, 4096),
             ("W13 EP8", 16, 1536, 2048, 16384), ("W2 EP8", 16, 2048, 768, 16384)]
#: (block_m, block_n, num_warps, num_stages) of the grouped INT8 kernel (int8_gemm.int8_tiles)
INT8_TILES = [(16, 64, 4, 4), (16, 128, 4, 4), (16, 64, 4, 6), (16, 128, 8, 4),
              (32, 64, 4, 4), (32, 128, 4, 4), (64, 64, 4, 4), (64, 128, 4, 4),
              (64, 128, 4, 3), (128, 128, 8, 3), (128, 128, 4, 3), (128, 256, 8, 3),
              (128, 128, 8, 4), (256, 128, 8, 3), (64, 256, 8, 3)]
INT8_CASES = [(label, e, n, k, m) for label, e, n, k in (
    ("W13 E128", 128, 1536, 2048), ("W2 E128", 128, 2048, 768), ("W13 EP8", 16, 1536, 2048),
    ("W2 EP8", 16, 2048, 768)) for m in (8, 64, 256, 1024, 4096, 16384)]

#: (block_m, block_n, num_warps, num_stages) of the FP8 and INT8 dense kernels, each timed with
#: K split 1-8 (DENSE_SPLITS), at DENSE_TOKENS tokens of bench.cases.DENSE_SHAPES
DENSE_TILES = [(bm, bn, 4, 4) for bm in (16, 32, 64) for bn in (32, 64, 128)]
DENSE_SPLITS = (1, 2, 4, 8)
DENSE_TOKENS = (1, 8, 16, 32, 64, 128, 256, 384, 512)


def _name(c: W4A16Config) -> str:
    return f"m{c.block_m} n{c.block_n} k{c.block_k} s{c.split_k} w{c.num_warps} st{c.num_stages}"


def _safe(fn):
    try:
        return fn()
    except Exception as err:  # out of shared memory, or a config this Triton cannot compile
        print("skipped:", str(err).splitlines()[0][:120], flush=True)
        return None


def _warm(jobs):
    """Worker: compile each (kind, config, K) on a tiny problem with the same specialization."""
    scheme, fp8, int8 = get_scheme("w4a16"), get_scheme("fp8-block"), get_scheme("int8")
    counts = torch.tensor([5, 0, 3] + [0] * 13, device="cuda", dtype=torch.int32)
    for kind, cfg, k in jobs:
        x = torch.randn(8, k, device="cuda", dtype=torch.bfloat16)
        if kind == "w4a16":
            q = w4a16_quantize(torch.randn(16, 256, k, device="cuda"), scheme)
            _safe(lambda: w4a16_grouped_matmul(x, q, counts, cfg))
        elif kind == "int8":
            q = int8.quantize_weight(torch.randn(16, 256, k, device="cuda"))
            _safe(lambda: int8_grouped_linear(x, q, counts, cfg))
        elif kind == "int8-dense":
            q = int8.quantize_weight(torch.randn(256, k, device="cuda"))
            _safe(lambda: int8_matmul(*int8_quantize_activation(x), q, tiles=cfg))
        elif kind == "fp8-dense":
            q = fp8_block_quantize(torch.randn(256, k, device="cuda"), fp8)
            _safe(lambda: fp8_block_matmul(*fp8_quantize_activation(x), q, tiles=cfg))
        else:
            q = fp8_block_quantize(torch.randn(16, 256, k, device="cuda"), fp8)
            _safe(lambda: fp8_block_grouped_linear(x, q, counts, cfg))
    torch.cuda.synchronize()


def precompile(jobs, workers):
    chunks = [jobs[i::workers] for i in range(workers)]
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
        list(pool.map(_warm, chunks))


def _step_us(fns):
    """Decode sizes: per call in CUDA graphs of STEP_CALLS calls, as the benchmark times them."""
    return graph_us(fns, calls=STEP_CALLS)


def _w4a16_sweep(cases):
    scheme = get_scheme("w4a16")
    weights = {}
    for label, e, n, k, m, lists in cases:
        if label not in weights:
            weights.clear()
            weights[label] = W4A16Copies(scheme, e, n, k)
        counts = route(m, e, TOP_K)
        qws = weights[label].int4(int((counts > 0).sum()))
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        offs = torch.cumsum(counts, 0, dtype=torch.int32)
        want = torch._grouped_mm(x, scheme.dequantize(qws[0]).bfloat16().transpose(1, 2),
                                 offs=offs).float()
        results = []
        for cfg in [c for cl in lists for c in cl]:
            y = _safe(lambda: w4a16_grouped_matmul(x, qws[0], counts, cfg))
            if y is None:
                continue
            err = (y.float() - want).norm() / want.norm()
            if not err < 1e-2:
                print(f"WRONG {label} M={m} {_name(cfg)}: rel err {err}", flush=True)
                continue
            timer = _step_us if m <= DECODE_MAX_TOKENS else median_us
            t = timer([lambda q=q: w4a16_grouped_matmul(x, q, counts, cfg) for q in qws])
            results.append((t, _name(cfg)))
        results.sort()
        print(f"W4A16 {label} M={m}: " + "; ".join(f"{n} {t:.1f}" for t, n in results[:6])
              + (f" | worst {results[-1][0]:.1f}" if results else "no config ran"), flush=True)


def _gluon_sweep(cases):
    """The Gluon W4A16 kernel's tiles in CUDA graphs, against the Triton kernel's default tiles;
    the three best GEMM tiles again as persistent grids of 2-4 CTAs per SM; for fc1 (W13) also
    the fused SwiGLU epilogue's (64-row gate and up halves), its three best persistent too. The three best of each again with
    x by cp.async of the tiles' own rows ("xa": gluon_x_async), with a tail of 16
    rows in an expert's last row tile ("t16": gluon_tail), and with stages of 2 and 4
    scale groups in rings of 2 and 3 ("g2", "g4": gluon_groups). Each launch as the op
    makes it: PDL, release, early words and refills first where w4a16_gluon_rules gives them
    for those tiles and groups.
    One uniform routing here: check a pick under skewed routing too before a rule takes it."""
    for label, e, n, k, m in cases:
        counts = route(m, e, TOP_K)
        qws = W4A16Copies(get_scheme("w4a16"), e, n, k).int4(int((counts > 0).sum()))
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        triton_cfg = default_config(x.shape[0], e, n, k, 128)  # a config: the Triton kernel
        offs = torch.cumsum(counts, 0, dtype=torch.int32)
        gemm_want = torch._grouped_mm(
            x, get_scheme("w4a16").dequantize(qws[0]).bfloat16().transpose(1, 2), offs=offs)
        fused_want = reference_gated_activation(gemm_want).float()
        gemm_want = gemm_want.float()
        t_triton = _step_us([lambda q=q: w4a16_grouped_matmul(x, q, counts, triton_cfg)
                              for q in qws])

        def timed(tiles, swiglu=False, x_async=False, tail=0, groups=1):
            """(us, name) of these tiles, or None where they do not fit or miss the reference."""
            # tiles are tuned over the whole K: the split (gluon_split_k) was fitted apart
            launch = dict(gluon_launch((x.shape[0], e, n, k), tiles, swiglu), x_async=x_async,
                          tail=tail, groups=groups, split_k=1)
            launch["refill_first"] = gluon_refill_first(tiles, groups)

            def run(q):
                return w4a16_grouped_gluon(x, q, counts, *tiles, **launch)
            y = _safe(lambda: run(qws[0]))
            if y is None:
                return None
            want = fused_want if swiglu else gemm_want
            err = (y.float() - want).norm() / want.norm()
            if not err < 1e-2:
                print(f"WRONG gluon {label} M={m} {tiles}{' swiglu' if swiglu else ''}: rel err "
                      f"{err}", flush=True)
                return None
            bm, bn, st, reg, per_sm = tiles
            name = (f"m{bm} n{bn} st{st}" + ("" if reg is None else f" r{reg}")
                    + ("" if per_sm is None else f" p{per_sm}") + (" xa" if x_async else "")
                    + (f" t{tail}" if tail else "") + (f" g{groups}" if groups > 1 else ""))
            return _step_us([lambda q=q: run(q) for q in qws]), name, tiles

        gemm = sorted(filter(None, (timed(t + (None, )) for t in GLUON_TILES)))
        gemm += filter(None, (timed(tiles[:4] + (per_sm, )) for _, _, tiles in gemm[:3]
                              for per_sm in (2, 3, 4)))
        best = [tiles for _, _, tiles in sorted(gemm)[:3]]
        gemm += filter(None, (timed(tiles, x_async=True) for tiles in best))
        gemm += filter(None, (timed(tiles, tail=16) for tiles in best))
        gemm += filter(None, (timed(tiles[:2] + (st, ) + tiles[3:], groups=g) for tiles in best
                              for g in (2, 4) for st in (2, 3)))
        fused = sorted(filter(None, (
            timed((bm, 64, st, reg, None), swiglu=True) for bm in (8, 16, 32, 64, 128)
            for st in (2, 3, 4) for reg in (None, 96, 128)
            if (reg is None or bm <= 32) and (st < 4 or bm <= 16))
            if label.startswith("W13") else []))
        fused = sorted(fused + list(filter(None, (  # persistent grids (round 26: they won
            timed(tiles[:4] + (per_sm, ), swiglu=True)  # at EP2 once with 4-group stages)
            for _, _, tiles in fused[:3] for per_sm in (2, 3, 4)))))
        fused += filter(None, (timed(tiles, swiglu=True, x_async=x_async, tail=tail)
                               for _, _, tiles in fused[:3]
                               for x_async, tail in ((True, 0), (False, 16))))
        fused += filter(None, (timed(tiles[:2] + (st, ) + tiles[3:], swiglu=True, groups=g)
                               for _, _, tiles in fused[:3] for g in (2, 4) for st in (2, 3)))
        fused.sort()
        for kind, rows in [("GEMM", sorted(gemm)), ("fused SwiGLU", fused)]:
            if rows:
                print(f"Gluon W4A16 {kind} {label} M={m}: triton GEMM {t_triton:.1f}; "
                      + "; ".join(f"{name} {t:.1f}" for t, name, _ in rows[:5]), flush=True)
        del qws


def _fp8_sweep():
    scheme = get_scheme("fp8-block")
    for label, e, n, k, m in FP8_CASES:
        qw = fp8_block_quantize(torch.randn(e, n, k, device="cuda"), scheme)
        counts = route(m, e, TOP_K)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        wb = scheme.dequantize(qw).bfloat16().transpose(1, 2)
        offs = torch.cumsum(counts, 0, dtype=torch.int32)
        t_bf16 = median_us([lambda: torch._grouped_mm(x, wb, offs=offs)])
        want = scheme.reference_grouped_matmul(x, qw, counts.cpu()).float()
        results = []

        def checked(name, fn):
            """fn's time, or None where it fails or misses the reference (activation codes
            included: the reference quantizes x as the kernels do)."""
            y = _safe(fn)
            if y is None:
                return None
            err = (y.float() - want).norm() / want.norm()
            if not err < 1e-2:
                print(f"WRONG fp8 {label} M={m} {name}: rel err {err}", flush=True)
                return None
            return median_us([fn])

        for tiles in FP8_TILES:
            t = checked(tiles, lambda: fp8_block_grouped_linear(x, qw, counts, tiles))
            if t is not None:
                results.append((t, tiles))
        for tiles in FP8_WS_TILES:  # the activation quantizer included, as above
            name = f"ws{tiles[0]}/{tiles[1]}"
            t = checked(name, lambda: fp8_grouped_ws(*fp8_quantize_activation(x), qw, counts,
                                                     tiles))
            if t is not None:
                results.append((t, name))
        results.sort()
        print(f"FP8 {label} M={m}: bf16 {t_bf16:.1f}; " + "; ".join(
            f"{t_} {t:.1f} ({t_bf16 / t:.2f}x)" for t, t_ in results[:4]), flush=True)
        del qw, wb


def _int8_sweep():
    """Every case checked bit for bit against the reference, timed against bf16
    torch._grouped_mm (decode sizes in CUDA graphs), the weights rotated past L2."""
    scheme = get_scheme("int8")
    for label, e, n, k, m in INT8_CASES:
        master = torch.randn(e, n, k, device="cuda")
        qws = [scheme.quantize_weight(master + i) for i in range(copies_for(e * n * k))]
        wbs = [(master + i).bfloat16().transpose(1, 2) for i in range(copies_for(2 * e * n * k))]
        counts = route(m, e, TOP_K)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        offs = torch.cumsum(counts, 0, dtype=torch.int32)
        timer = _step_us if m <= DECODE_MAX_TOKENS else median_us
        t_bf16 = timer([lambda w=w: torch._grouped_mm(x, w, offs=offs) for w in wbs])
        want, results = scheme.reference_grouped_matmul(x, qws[0], counts.cpu()), []
        for tiles in INT8_TILES:
            y = _safe(lambda: int8_grouped_linear(x, qws[0], counts, tiles))
            if y is None:
                continue
            if not torch.equal(y, want):
                print(f"WRONG int8 {label} M={m} {tiles}: differs from the reference",
                      flush=True)
                continue
            results.append((timer([lambda q=q: int8_grouped_linear(x, q, counts, tiles)
                                   for q in qws]), tiles))
        results.sort()
        print(f"INT8 {label} M={m}: bf16 {t_bf16:.1f}; " + "; ".join(
            f"{t_} {t:.1f} ({t_bf16 / t:.2f}x)" for t, t_ in results[:4]), flush=True)
        del qws, wbs


def _dense_gemms(scheme_name: str, x: torch.Tensor, qweight):
    """(the rule's choice, its call, a call of given tiles, cuBLAS's call or None) of one dense
    GEMM on x quantized once: tiles are timed alone, as the rule chooses between them."""
    n, k = qweight.out_features, qweight.in_features
    if scheme_name == "int8":
        xq, xs = int8_quantize_activation(x)
        return (int8_dense_tiles(x.shape[0], n, k, x.device),
                lambda q: int8_matmul(xq, xs, q),
                lambda q, t: int8_matmul(xq, xs, q, tiles=t), None)
    xq, xs = quantize_linear_input(x, qweight)  # rows padded to 4 where cuBLAS takes the call
    xq4, xs4 = fp8_quantize_activation(x, pad_rows_to=4)
    return ("scaled_mm" if scaled_mm_applies(x, qweight)
            else fp8_dense_tiles(x.shape[0], n, k, x.device),
            lambda q: fp8_block_matmul(xq, xs, q),
            lambda q, t: fp8_block_matmul(xq, xs, q, tiles=t),
            (lambda q: fp8_block_matmul(xq4, xs4, q, scaled_mm=True))
            if scaled_mm_supports(x, qweight) else None)


def _dense_sweep():
    """FP8 and INT8 dense GEMMs (attention's projections and their TP2 halves) at decode sizes:
    DENSE_TILES x DENSE_SPLITS against the rule's tiles (each file's dense_tiles), cuBLAS's
    blockwise scaled_mm for FP8 on Hopper, and bf16; CUDA graphs of STEP_CALLS calls, weights
    rotated past L2. INT8 outputs checked bit for bit against the rule's, FP8's within 1e-2 of
    the largest output."""
    for label, n, k in DENSE_SHAPES:
        master = torch.randn(n, k, device="cuda")
        wbs = [(master + i).bfloat16() for i in range(copies_for(2 * n * k))]
        for scheme_name in ("fp8-block", "int8"):
            scheme = get_scheme(scheme_name)
            qws = [scheme.quantize_weight(master + i) for i in range(copies_for(n * k))]
            for m in DENSE_TOKENS:
                x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
                rule, ruled, tiled, cublas = _dense_gemms(scheme_name, x, qws[0])
                want = ruled(qws[0])[:m].float()
                results = []
                for tiles in [t + (s,) for t in DENSE_TILES for s in DENSE_SPLITS
                              if t[0] <= max(16, m) and 2 * s * 128 <= k]:
                    y = _safe(lambda: tiled(qws[0], tiles))
                    if y is None:
                        continue
                    err = float((y[:m].float() - want).abs().max() / want.abs().max())
                    if err > (0 if scheme_name == "int8" else 1e-2):
                        print(f"WRONG {scheme_name} dense {label} M={m} {tiles}: {err:.1e}",
                              flush=True)
                        continue
                    t_us = _step_us([lambda q=q, t=tiles: tiled(q, t) for q in qws])
                    results.append((t_us, tiles))
                results.sort()
                t_rule = _step_us([lambda q=q: ruled(q) for q in qws])
                t_bf16 = _step_us([lambda w=w: x @ w.t() for w in wbs])
                t_cublas = f"; scaled_mm {_step_us([lambda q=q: cublas(q) for q in qws]):.1f}" \
                    if cublas else ""
                print(f"{scheme_name} dense {label} {n}x{k} M={m}: bf16 {t_bf16:.1f}; rule "
                      f"{rule} {t_rule:.1f}{t_cublas}; best: " + "; ".join(
                          f"{t_} {t:.1f} ({t / t_rule:.2f}x the rule's time)"
                          for t, t_ in results[:4]), flush=True)
            del qws
        del wbs


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", choices=["w4a16", "w4a16-gluon", "fp8", "int8", "dense"],
                   action="append")
    p.add_argument("--workers", type=int, default=12)
    p.add_argument("--cases", default="", metavar="TEXT",
                   help="only the W4A16 and Gluon cases whose label contains TEXT (e.g. EP8)")
    p.add_argument("--decode", action="store_true",
                   help=f"only W4A16 cases of <= {DECODE_MAX_TOKENS} tokens")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("qarl_kernels.tune needs a CUDA GPU: it times kernels")
    parts = args.only or ["w4a16", "w4a16-gluon", "fp8", "int8", "dense"]

    def chosen(case):
        return args.cases in case[0] and (not args.decode or case[4] <= DECODE_MAX_TOKENS)

    cases = [c for c in W4A16_CASES if chosen(c)]
    jobs = []
    if "w4a16" in parts:
        cfgs = {(cfg, case[3]) for case in cases for cl in case[5] for cfg in cl}
        jobs += [("w4a16", c, k) for c, k in cfgs]
    if "fp8" in parts:
        jobs += [("fp8", t, 2048) for t in FP8_TILES]
    if "int8" in parts:
        jobs += [("int8", t, k) for t in INT8_TILES for k in (768, 2048)]
    if "dense" in parts:
        jobs += [(kind, t + (s,), 4096) for kind in ("fp8-dense", "int8-dense")
                 for t in DENSE_TILES for s in DENSE_SPLITS]
    precompile(jobs, args.workers)
    torch.manual_seed(0)
    if "w4a16" in parts:
        _w4a16_sweep(cases)
    if "w4a16-gluon" in parts:
        _gluon_sweep([c for c in GLUON_CASES if chosen(c)])
    if "fp8" in parts:
        _fp8_sweep()
    if "int8" in parts:
        _int8_sweep()
    if "dense" in parts:
        _dense_sweep()


if __name__ == "__main__":
    main()
