"""Session 39: the fused fc1 with K split against the unsplit call and an fp64 SwiGLU of the
exact fp32 GEMM, on the counts that failed the elementwise tolerance."""
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_gluon as wg
torch.manual_seed(0)
scheme = get_scheme("w4a16")
q = scheme.quantize_weight(torch.randn(6, 2 * 192, 1024, device="cuda"))
counts = [0, 0, 9, 0, 0, 40]
tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
x = torch.randn(sum(counts), 1024, device="cuda").bfloat16()
probs = torch.rand(sum(counts), device="cuda")
w = scheme.dequantize(q).double()
h = torch.cat([x[:9].double() @ w[2].T, x[9:].double() @ w[5].T])
g, u = h.chunk(2, dim=-1)
ref = torch.nn.functional.silu(g) * u * probs.double()[:, None]
for tiles, groups in [((8, 64, 2, None), 2), ((32, 64, 3, None), 1)]:
    whole = wg.w4a16_grouped_gluon(x, q, tokens, *tiles, swiglu=True, probs=probs, groups=groups).double()
    for s in (2, 4):
        got = wg.w4a16_grouped_gluon(x, q, tokens, *tiles, swiglu=True, probs=probs, groups=groups, split_k=s).double()
        d = (got - whole).abs()
        print(tiles, s, "differ", int((d > 0).sum()), "of", d.numel(), "max", d.max().item(),
              "rel", (d / whole.abs().clamp_min(1e-30)).max().item(),
              "norm", ((got - whole).norm() / whole.norm()).item(),
              "vs fp64: split", ((got - ref).norm() / ref.norm()).item(), "whole", ((whole - ref).norm() / ref.norm()).item())
