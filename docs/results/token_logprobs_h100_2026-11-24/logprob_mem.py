"""Old (whole-tensor) vs new (chunked) token log-probabilities on the GPU: peak memory, time,
bits. Qwen3's vocabulary, 2 x 4096 tokens."""
import json, os, sys, time
import torch
from megatron_qarl.trainer.token_logprobs import token_logprobs

V, B, S, T = 151936, 2, 4096, 0.7
dev = "cuda"
torch.manual_seed(0)
logits = (torch.randn(B, S, V, device=dev) * 2).to(torch.bfloat16).requires_grad_()
predict_pos = torch.arange(S - 1, device=dev).expand(B, -1)
targets = torch.randint(0, V, (B, S - 1), device=dev)
mask = torch.ones(B, S - 1, dtype=torch.bool, device=dev)
weights = torch.randn(B, S - 1, device=dev)


def old():  # the code before 2026-11-24
    picked = logits.gather(1, predict_pos[..., None].expand(-1, -1, V))
    logprobs = torch.log_softmax(picked.float() / T, dim=-1)
    return torch.where(mask, logprobs.gather(-1, targets[..., None]).squeeze(-1), 0.0), None


def new(with_entropy=False):
    seq, col = mask.nonzero(as_tuple=True)
    rows = seq * S + predict_pos[seq, col]
    lp, ent = token_logprobs(logits.reshape(-1, V), rows, targets[seq, col], T, with_entropy)
    zeros = torch.zeros(mask.shape, device=dev)
    return zeros.index_put((seq, col), lp), (zeros.index_put((seq, col), ent) if with_entropy else None)


out = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "tokens": B * (S - 1), "vocab": V}
results = {}
for name, fn in [("old", old), ("new", new), ("new+entropy", lambda: new(True))]:
    for rep in range(3):
        logits.grad = None
        torch.cuda.synchronize(); torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        t0 = time.perf_counter()
        lp, ent = fn()
        torch.cuda.synchronize(); t1 = time.perf_counter()
        (lp * weights).sum().backward()
        torch.cuda.synchronize(); t2 = time.perf_counter()
        peak = (torch.cuda.max_memory_allocated() - base) / 2**30
    results[name] = (lp.detach().clone(), logits.grad.clone(), ent)
    out[name] = {"peak_GiB_above_logits": round(peak, 2), "forward_ms": round((t1 - t0) * 1e3, 1),
                 "backward_ms": round((t2 - t1) * 1e3, 1)}
    print(name, out[name], flush=True)
lp_old, g_old, _ = results["old"]
lp_new, g_new, _ = results["new"]
out["forward_bits_equal"] = bool(torch.equal(lp_old, lp_new))
out["grad_max_abs_diff"] = float((g_old.float() - g_new.float()).abs().max())
out["grad_max_abs"] = float(g_old.float().abs().max())
# the engine's arithmetic on a decode batch of 8 rows (sampling.sample_next)
engine = torch.log_softmax(logits.detach()[:, 100].float() / T, dim=-1).gather(-1, targets[:, 100, None]).squeeze(-1)
out["engine_rows_bits_equal"] = bool(torch.equal(engine, lp_new[:, 100]))
ent = results["new+entropy"][2]
whole = torch.log_softmax(logits.detach()[0, :256].float() / T, dim=-1)
out["entropy_max_abs_diff_first_256"] = float((ent[0, :256] + (whole.exp() * whole).sum(-1)).abs().max())
print(json.dumps(out, indent=1))
json.dump(out, open(os.path.join(sys.argv[1], "logprob_mem.json"), "w"), indent=1)
