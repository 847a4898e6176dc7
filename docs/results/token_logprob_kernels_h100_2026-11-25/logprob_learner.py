"""Learner token logprobs on the GPU: torch's chunked path (the reference autograd function) vs
the kernels, 2 x 4095 response rows of Qwen3's vocabulary, bf16 logits, T = 0.7: time, peak
memory above the logits, values and gradients against each other."""
import json, os, sys, time
import torch
from megatron_qarl.quant import ops
from megatron_qarl.trainer import token_logprobs as tl_mod
from qarl_kernels.register import register_cuda_kernels

register_cuda_kernels()
V, B, S, T = 151936, 2, 4096, 0.7
dev = "cuda"
torch.manual_seed(0)
logits = (torch.randn(B * S, V, device=dev) * 2).to(torch.bfloat16).requires_grad_()
rows = (torch.arange(B, device=dev)[:, None] * S + torch.arange(S - 1, device=dev)).reshape(-1)
targets = torch.randint(0, V, (rows.numel(),), device=dev)
weights = torch.randn(rows.numel(), device=dev)


def chunked(with_entropy):
    return tl_mod._TokenLogprobs.apply(logits, rows, targets, T, with_entropy)


def kernel(with_entropy):
    return tl_mod.token_logprobs(logits, rows, targets, T, with_entropy)


out = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows.numel(), "vocab": V}
results = {}
for name, fn in [("chunked", chunked), ("kernel", kernel)]:
    for ent in (False, True):
        times = []
        for rep in range(4):
            logits.grad = None
            torch.cuda.synchronize(); torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            t0 = time.perf_counter()
            lp, entropy = fn(ent)
            torch.cuda.synchronize(); t1 = time.perf_counter()
            (lp * weights).sum().backward()
            torch.cuda.synchronize(); t2 = time.perf_counter()
            peak = (torch.cuda.max_memory_allocated() - base) / 2**30
            times.append(((t1 - t0) * 1e3, (t2 - t1) * 1e3))
        key = name + ("+entropy" if ent else "")
        fwd = sorted(t[0] for t in times[1:])[1]; bwd = sorted(t[1] for t in times[1:])[1]
        out[key] = {"peak_GiB_above_logits": round(peak, 2), "forward_ms": round(fwd, 2),
                    "backward_ms": round(bwd, 2)}
        results[key] = (lp.detach().clone(), logits.grad.clone(), entropy.clone())
        print(key, out[key], flush=True)
lp_c, g_c, e_c = results["chunked+entropy"]
lp_k, g_k, e_k = results["kernel+entropy"]
out["logprob_max_abs_diff"] = float((lp_c - lp_k).abs().max())
out["entropy_max_abs_diff"] = float((e_c - e_k).abs().max())
out["grad_max_abs_diff"] = float((g_c.float() - g_k.float()).abs().max())
out["grad_max_abs"] = float(g_c.float().abs().max())
out["grad_bits_differ_share"] = float((g_c != g_k).float().mean())
# the engine's draw on rows of a decode batch of 8 and the learner's logprobs of them
from megatron_qarl.rollout.base import SamplingParams
from megatron_qarl.rollout.embedded import sample_next
picked = logits.detach()[rows[100::1000][:8]]
tok, lp_engine = sample_next(picked, SamplingParams(temperature=T), torch.Generator(dev).manual_seed(0))
lp_learner, _ = tl_mod.token_logprobs(logits.detach(), rows[100::1000][:8], tok, T)
out["engine_rows_bits_equal_learner"] = bool(torch.equal(lp_engine, lp_learner))
print(json.dumps(out, indent=1))
json.dump(out, open(os.path.join(sys.argv[1], "logprob_learner.json"), "w"), indent=1)
