"""Decode attention at Qwen3-30B-A3B's heads (32 query, 4 KV, dim 128), batch 32: SDPA with a
mask and enable_gqa (before) against the KV-group fold (layers/sdpa_attention.py), CUDA graphs."""
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
K = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
def gqa(q, k, v, m):
    with sdpa_kernel(K):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, enable_gqa=True)
def fold(q, k, v, m):
    b, h, sq, d = q.shape; kv = k.shape[1]; g = h // kv
    with sdpa_kernel(K):
        o = F.scaled_dot_product_attention(q.reshape(b, kv, g * sq, d), k, v, attn_mask=m.repeat(1, 1, g, 1))
    return o.reshape(b, h, sq, d)
def time_us(fn, *a):
    for _ in range(3): fn(*a)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(10): fn(*a)
    s, e = torch.cuda.Event(True), torch.cuda.Event(True)
    g.replay(); torch.cuda.synchronize(); s.record()
    for _ in range(10): g.replay()
    e.record(); torch.cuda.synchronize(); return s.elapsed_time(e) * 1e3 / 100
for sk in (512, 2048, 4096, 8192):
    q = torch.randn(32, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(32, 4, sk, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    m = torch.ones(1, 1, 1, sk, dtype=torch.bool, device="cuda"); m[..., sk - 100:] = False
    a, b = gqa(q, k, v, m), fold(q, k, v, m)
    print(f"sk {sk}: enable_gqa {time_us(gqa, q, k, v, m):.1f} us, fold {time_us(fold, q, k, v, m):.1f} us, max diff {(a - b).abs().max().item():.2e}", flush=True)
