"""Session 31: MoE combine variants on the GPU: Megatron's scatter_add_ / deterministic index_add_
against a token-major gather-sum (torch ops, and one Triton kernel). Decode and training sizes."""
import sys, torch, triton, triton.language as tl

@triton.jit
def gather_sum_kernel(rows_ptr, order_ptr, out_ptr, H, K: tl.constexpr, BLOCK: tl.constexpr):
    t = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < H
    acc = tl.zeros([BLOCK], tl.float32)
    for r in tl.static_range(K):
        j = tl.load(order_ptr + t * K + r).to(tl.int64)
        acc += tl.load(rows_ptr + j * H + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + t.to(tl.int64) * H + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)

def triton_gather_sum(rows, order, T, K, block=1024):
    H = rows.shape[1]
    out = torch.empty(T, H, dtype=rows.dtype, device=rows.device)
    gather_sum_kernel[(T, triton.cdiv(H, block))](rows, order, out, H, K=K, BLOCK=block)
    return out

def timed(fn, n=50):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n): fn()
    g.replay(); torch.cuda.synchronize()
    best = []
    for _ in range(5):
        a, b = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record(); g.replay(); b.record(); torch.cuda.synchronize()
        best.append(a.elapsed_time(b) * 1000 / n)
    return sorted(best)[2]

H, K, E = 2048, 8, 128
torch.manual_seed(0)
for T in (64, 256, 1024, 4096, 16384):
    logits = torch.randn(T, E, device="cuda")
    top = logits.topk(K, dim=1).indices
    rmap = torch.zeros(T, E, dtype=torch.bool, device="cuda").scatter_(1, top, True)
    tok = torch.arange(T, device="cuda")[None].expand(E, T)
    sorted_idx = tok.masked_select(rmap.T.contiguous())          # Megatron's permutation
    rows = torch.randn(T * K, H, device="cuda", dtype=torch.bfloat16)
    order = sorted_idx.argsort(stable=True)
    ref = torch.zeros(T, H, dtype=torch.float32, device="cuda").index_add_(0, sorted_idx, rows.float())
    def scatter():
        return torch.zeros(T, H, dtype=rows.dtype, device="cuda").scatter_add_(
            0, sorted_idx.unsqueeze(1).expand(-1, H), rows)
    def index_add():
        return torch.zeros(T, H, dtype=rows.dtype, device="cuda").index_add_(0, sorted_idx, rows)
    def sort_only():
        return sorted_idx.argsort(stable=True)
    def torch_gather():
        return rows.index_select(0, sorted_idx.argsort(stable=True)).view(T, K, H).sum(1)
    def torch_gather_known():
        return rows.index_select(0, order).view(T, K, H).sum(1)
    def tri_gather():
        return triton_gather_sum(rows, sorted_idx.argsort(stable=True), T, K)
    def tri_gather_known():
        return triton_gather_sum(rows, order, T, K)
    res = {}
    for name, fn in [("scatter_add_", scatter), ("sort", sort_only), ("torch gather+sum", torch_gather),
                     ("torch gather+sum, order known", torch_gather_known), ("triton gather-sum", tri_gather),
                     ("triton, order known", tri_gather_known)]:
        out = fn()
        err = (out.float() - ref).abs().max().item() if out.dtype != torch.int64 else 0.0
        res[name] = (timed(fn), err)
    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = False
    out = index_add()
    res["index_add_ (deterministic)"] = (timed(index_add), (out.float() - ref).abs().max().item())
    torch.use_deterministic_algorithms(False)
    # repeatability of each
    rep = {}
    for name, fn in [("scatter_add_", scatter), ("triton gather-sum", tri_gather)]:
        outs = [fn() for _ in range(20)]
        rep[name] = all(torch.equal(outs[0], o) for o in outs[1:])
    print(f"T={T} rows={T*K}: " + "; ".join(f"{k} {v[0]:.2f} us (max err {v[1]:.3g})" for k, v in res.items())
          + f"; repeats bitwise: {rep}", flush=True)
