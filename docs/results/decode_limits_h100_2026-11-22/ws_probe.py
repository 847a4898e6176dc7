"""One-warp TMA loader (w4g_ws) against the committed Gluon kernel, same tiles, CUDA graphs."""
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_swiglu_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as base
import w4g_ws

CASES = [("W13 EP8", 16, 1536, 2048, m) for m in (32, 64, 128, 256)] + [
    ("W2 EP8", 16, 2048, 768, m) for m in (32, 64, 256)] + [
    ("W13 E128", 128, 1536, 2048, m) for m in (256, 1024)] + [
    ("W2 E128", 128, 2048, 768, m) for m in (256, 1024)] + [("W13 TP2", 128, 768, 2048, 256)]
TILES = [(32, 128, 3), (64, 64, 3), (64, 64, 4), (64, 128, 3), (64, 128, 2), (128, 64, 2),
         (128, 128, 2), (32, 128, 4), (32, 64, 3)]
REGS = [80, 104, 120]


def main():
    for label, e, n, k, m in CASES:
        qws = _rotated_w4a16(e, n, k)
        counts = route(m, e, 8)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        probs = torch.rand(x.shape[0], device="cuda")
        best = gluon_tiles(x.shape[0], e, k) or (64, 128, 3)
        t_base = graph_us([lambda q=q: base(x, q, counts, *best) for q in qws])
        res = []
        for tiles in TILES:
            want = base(x, qws[0], counts, *tiles)
            for r in REGS:
                try:
                    y = w4g_ws.w4a16_grouped_gluon(x, qws[0], counts, *tiles, maxnreg=r)
                except Exception as err:
                    print("  skip", tiles, r, str(err).splitlines()[0][:100], flush=True)
                    continue
                if not torch.equal(y, want):
                    print(f"  WRONG {label} M={m} {tiles} r{r}", flush=True)
                    continue
                t = graph_us([lambda q=q: w4g_ws.w4a16_grouped_gluon(x, q, counts, *tiles,
                                                                     maxnreg=r) for q in qws])
                res.append((t, f"{tiles} r{r}"))
        res.sort()
        line = "; ".join(f"{t:.1f} {nm}" for t, nm in res[:6])
        print(f"{label} M={m}: base {best} {t_base:.1f} | ws {line}", flush=True)
        if label.startswith("W13") and m <= 256:
            bm = best[0]
            bn, st = gluon_swiglu_tiles(bm, e)
            fb = graph_us([lambda q=q: base(x, q, counts, bm, bn, st, swiglu=True, probs=probs)
                           for q in qws])
            want = base(x, qws[0], counts, bm, bn, st, swiglu=True, probs=probs)
            fr = []
            for st2 in (2, 3):
                for r in (80, 104, 120):
                    try:
                        y = w4g_ws.w4a16_grouped_gluon(x, qws[0], counts, bm, bn, st2, swiglu=True,
                                                       probs=probs, maxnreg=r)
                    except Exception as err:
                        print("  skip swiglu", st2, r, str(err).splitlines()[0][:100], flush=True)
                        continue
                    ok = torch.equal(y, want) if st2 == st else True
                    t = graph_us([lambda q=q: w4g_ws.w4a16_grouped_gluon(
                        x, q, counts, bm, bn, st2, swiglu=True, probs=probs, maxnreg=r)
                        for q in qws])
                    fr.append((t, f"st{st2} r{r}{'' if ok else ' WRONG'}"))
            fr.sort()
            print(f"  swiglu {(bm, bn, st)} base {fb:.1f} | ws " +
                  "; ".join(f"{t:.1f} {nm}" for t, nm in fr[:4]), flush=True)
        del qws


if __name__ == "__main__":
    main()
