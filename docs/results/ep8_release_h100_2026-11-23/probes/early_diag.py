import torch
from qarl_kernels.bench import TOP_K
from qarl_kernels.bench_setup import route
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_groups, gluon_pdl
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from qarl_kernels.w4a16_dequantize import w4a16_dequantize
from megatron_qarl.quant import get_scheme
scheme = get_scheme("w4a16")
e, n, k = 16, 1536, 2048
q = w4a16_quantize(torch.randn(e, n, k, device="cuda"), scheme)
w = w4a16_dequantize(q).float()
counts = route(128, 128, TOP_K, seed=0, skew=0.5, local=16)
rows = int(counts.sum()); shape = (rows, e, n, k)
t = gluon_tiles(*shape)
print("counts", counts.tolist(), "rows", rows, "tiles", t)
starts = torch.cumsum(counts, 0) - counts
x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
kw = dict(groups=gluon_groups(*shape), pdl=True)
base = w4a16_grouped_gluon(x, q, counts, *t, **kw)
for early, rel in [(True, False), (True, True), (False, True), (False, False)]:
    nbad = 0
    for i in range(40):
        y = w4a16_grouped_gluon(x, q, counts, *t, early_words=early, release=rel, **kw)
        if torch.equal(y, base):
            continue
        nbad += 1
        if nbad <= 3:
            r = int((y != base).any(1).nonzero()[0])
            cols = (y[r] != base[r]).nonzero().flatten()
            ex = int((starts <= r).sum()) - 1
            cand = {ee: float(((x[r].float() @ w[ee].T).bfloat16().float() - y[r].float()).abs().max()) for ee in range(e)}
            best = min(cand, key=cand.get)
            print(f"early={early} release={rel} call {i}: row {r} (expert {ex}, row {r - int(starts[ex])} of {int(counts[ex])}), "
                  f"{cols.numel()} cols differ, {int(cols.min())}-{int(cols.max())}; max |diff| {float((y[r]-base[r]).abs().max()):.3g}; "
                  f"row matches expert {best} ({cand[best]:.3g})", flush=True)
    print(f"early={early} release={rel}: {nbad}/40 bad", flush=True)
