"""Session 28: the fixed-size exchange's padding with routed_rows (tiles chosen for the rows
routing fills on average) against exact x and padding without the hint. One EP rank's 16
(EP8) or 64 (EP2) experts; the gathered tokens of all ranks routed top-8 over 128 experts;
CUDA graphs of 10 calls, rotated weights. W4A16: fc1 + SwiGLU (W13) and fc2 (W2) as pad_rows.py
timed them, and the whole experts op; FP8 block: the whole experts op."""
import torch
import triton

import qarl_kernels.w4a16_gluon as wg
from megatron_qarl.quant import get_scheme
from qarl_kernels.expert_tiles import tile_bound
from qarl_kernels.w4a16_gemm import gluon_launch, gluon_swiglu_tiles, gluon_tiles
from qarl_kernels.bench import _w4a16_weights
from qarl_kernels.bench_setup import STEP_CALLS, graph_us, route
from qarl_kernels.fp8_gemm import fp8_swiglu_experts
from qarl_kernels.fp8_quantize import fp8_block_quantize
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul, w4a16_grouped_swiglu, \
    w4a16_swiglu_experts

w4, fp8 = get_scheme("w4a16"), get_scheme("fp8-block")
print(torch.cuda.get_device_name(), torch.__version__, flush=True)


def graphed_once(fn):
    """fn's output as one captured replay computes it (the rules of a decode graph)."""
    fn()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = fn()
    g.replay()
    torch.cuda.synchronize()
    return y.clone()


def row_check(y, want, routed):
    d = (y[:routed].float() - want[:routed].float())
    return torch.equal(y[:routed], want[:routed]), (d.norm() / want[:routed].float().norm()).item()


def compare(label, fns_of, routed, capacity, hint):
    """fns_of(rows, routed_rows, q) -> one call; times exact / padded / padded + hint."""
    t = {}
    for name, rows, rr in (("exact", routed, None), ("padded", capacity, None),
                           ("hint", capacity, hint)):
        t[name] = graph_us([fns_of(rows, rr, q) for q in range(fns_of.copies)], calls=STEP_CALLS)
    y_exact = graphed_once(fns_of(routed, None, 0))
    y_hint = graphed_once(fns_of(capacity, hint, 0))
    same, err = row_check(y_hint, y_exact, routed)
    print(f"{label}, routed {routed}, capacity {capacity}, hint {hint}: exact {t['exact']:.1f}, "
          f"padded {t['padded']:.1f} ({t['padded'] / t['exact']:.2f}x), hint {t['hint']:.1f} "
          f"({t['hint'] / t['exact']:.2f}x); hint rows == exact: {same} (rel {err:.1e})",
          flush=True)


def walked(x, q, counts, hint, probs=None):
    """The Gluon kernel with the hint's tiles on a grid capped at the bound of 2 x hint rows,
    persistent (programs walk on): early words and refill-first off, as persistent grids."""
    e, n, k = q.data.shape[0], q.out_features, x.shape[1]
    shape = (hint, e, n, k)
    swiglu = probs is not None
    tiles = gluon_swiglu_tiles(*shape) if swiglu else gluon_tiles(*shape)
    launch = gluon_launch(shape, tiles, swiglu=swiglu)
    if tiles[4]:
        return wg.w4a16_grouped_gluon(x, q, counts, *tiles, probs=probs, **launch)
    launch.update(early_words=False, refill_first=False)
    n_out = n // 2 if swiglu else n
    cap = triton.cdiv(n_out, tiles[1]) * tile_bound(min(x.shape[0], 2 * hint), e, tiles[0])
    own = wg.sm_count
    wg.sm_count = lambda device: cap
    try:
        return wg.w4a16_grouped_gluon(x, q, counts, *tiles[:4], 1, probs=probs, **launch)
    finally:
        wg.sm_count = own


def walk_compare(label, make, copies, routed, hint):
    t = graph_us([lambda q=q: make(q) for q in range(copies)], calls=STEP_CALLS)
    print(f"{label} walked (capped persistent grid): {t:.1f}", flush=True)


class Calls:
    def __init__(self, make, copies):
        self.make, self.copies = make, copies

    def __call__(self, rows, rr, q):
        return lambda: self.make(rows, rr, q)


for ep, local in ((8, 16), (2, 64)):
    share = 8 * local / (128 * min(8, local))
    qw13, _ = _w4a16_weights(w4, local, 1536, 2048)
    qw2, _ = _w4a16_weights(w4, local, 2048, 768)
    copies = min(len(qw13), len(qw2))
    f1 = fp8_block_quantize(torch.randn(local, 1536, 2048, device="cuda"), fp8)
    f2 = fp8_block_quantize(torch.randn(local, 2048, 768, device="cuda"), fp8)
    for per_rank, skew in ((8, 0.0), (32, 0.0), (128, 0.0), (32, 0.5), (128, 0.5)):
        gathered = per_rank * ep
        counts = route(gathered, 128, 8, seed=1, skew=skew, local=local)
        routed, capacity = int(counts.sum()), gathered * min(8, local)
        hint = round(capacity * share)
        x13 = torch.randn(capacity, 2048, device="cuda", dtype=torch.bfloat16)
        x2 = torch.randn(capacity, 768, device="cuda", dtype=torch.bfloat16)
        probs = torch.rand(capacity, device="cuda")
        tag = f"EP{ep} {per_rank}/rank skew {skew}"
        compare(f"{tag} W13", Calls(lambda r, rr, q: w4a16_grouped_swiglu(
            x13[:r], qw13[q], counts, probs[:r], routed_rows=rr), len(qw13)),
            routed, capacity, hint)
        compare(f"{tag} W2", Calls(lambda r, rr, q: w4a16_grouped_matmul(
            x2[:r], qw2[q], counts, routed_rows=rr), len(qw2)), routed, capacity, hint)
        if ep == 8:
            walk_compare(f"{tag} W13", lambda q: walked(x13, qw13[q], counts, hint, probs),
                         len(qw13), routed, hint)
            walk_compare(f"{tag} W2", lambda q: walked(x2, qw2[q], counts, hint), len(qw2),
                         routed, hint)
            y = graphed_once(lambda: walked(x2, qw2[0], counts, hint))
            want = graphed_once(lambda: w4a16_grouped_matmul(x2[:routed], qw2[0], counts))
            print("  walked W2 rows == exact:", row_check(y, want, routed), flush=True)
        compare(f"{tag} W4A16 experts", Calls(lambda r, rr, q: w4a16_swiglu_experts(
            x13[:r], qw13[q], qw2[q], counts, probs[:r], routed_rows=rr), copies),
            routed, capacity, hint)
        compare(f"{tag} FP8 experts", Calls(lambda r, rr, q: fp8_swiglu_experts(
            x13[:r], f1, f2, counts, probs[:r], routed_rows=rr), 1), routed, capacity, hint)
    del qw13, qw2, f1, f2
    torch.cuda.empty_cache()
