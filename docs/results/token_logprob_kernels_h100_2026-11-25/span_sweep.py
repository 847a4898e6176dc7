"""SPAN sweep for the token-logprob kernels: sampler step (CUDA graphs) and learner fwd/bwd."""
import torch, triton
from qarl_kernels import token_logprobs as k
from qarl_kernels.bench_setup import graph_us

V = 151936
for span in (4096, 8192, 16384, 32768):
    k.SPAN = span
    row = [f"SPAN {span} parts {triton.cdiv(V, span)}:"]
    for b in (1, 32, 256, 1024):
        logits = (4 * torch.randn(b, V, device="cuda")).to(torch.bfloat16)
        for t in ((1.0, 0.7) if b == 256 else (1.0,)):
            us = graph_us([lambda: k.sample_with_logprobs(logits, t, None)])
            row.append(f"sample B={b} T={t} {us:.1f} us")
    logits = (2 * torch.randn(8190, V, device="cuda")).to(torch.bfloat16)
    rows = torch.arange(8190, device="cuda"); tg = torch.randint(0, V, (8190,), device="cuda")
    g = torch.randn(8190, device="cuda")
    fwd = triton.testing.do_bench(lambda: k.token_logprobs_forward(logits, rows, tg, 0.7, True))
    _, _, norm = k.token_logprobs_forward(logits, rows, tg, 0.7, True)
    bwd = triton.testing.do_bench(lambda: k.token_logprobs_backward(g, logits, rows, tg, 0.7, norm))
    row.append(f"learner 8190 rows fwd+entropy {fwd:.2f} ms bwd {bwd:.2f} ms")
    print(" | ".join(row), flush=True)
