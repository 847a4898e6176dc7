"""Session 31: routed_sum counting the routing map in the kernel against torch's cumsum of the
transposed map, by tokens (top-8 of 128 experts, hidden 2048, CUDA graphs)."""
import torch
from qarl_kernels.bench_setup import graph_us
from qarl_kernels.routed_sum import routed_sum

for m in (16, 32, 64, 128, 256):
    scores = torch.rand(m, 128, device="cuda")
    rmap = torch.zeros(m, 128, dtype=torch.bool, device="cuda").scatter_(1, scores.topk(8, dim=1).indices, True)
    rows = torch.randn(m * 8, 2048, device="cuda", dtype=torch.bfloat16)
    a = routed_sum(rows, rmap, 8, count_tokens=1 << 20)
    b = routed_sum(rows, rmap, 8, count_tokens=0)
    assert torch.equal(a, b)
    t_in = graph_us([lambda: routed_sum(rows, rmap, 8, count_tokens=1 << 20)])
    t_scan = graph_us([lambda: routed_sum(rows, rmap, 8, count_tokens=0)])
    print(f"M={m}: counted in the kernel {t_in:.1f} us, torch's cumsum {t_scan:.1f} us", flush=True)
