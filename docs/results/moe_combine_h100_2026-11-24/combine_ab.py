"""Session 31: Megatron's MoE combine against the routed sums (layers/token_combine.py) on the
reduced Qwen3-30B-A3B (3 layers, W4A16), with torch's deterministic algorithms off and on:
generations repeated (first differing logprob), the steady decode step, and a training forward +
backward of 4 x 512 tokens, alternating in one process (the dispatchers' routes_per_token set
to None gives Megatron's combine)."""
import os, sys, time
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch
import torch.distributed as dist

from megatron_qarl.models import build_model, get_preset
from megatron_qarl.rollout.base import SamplingParams
from megatron_qarl.rollout.embedded.generate import generate_batch
from megatron.core import parallel_state, tensor_parallel

backend = sys.argv[1] if len(sys.argv) > 1 else "local"
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29528", rank=0, world_size=1)
torch.cuda.set_device(0)
parallel_state.initialize_model_parallel()
tensor_parallel.model_parallel_cuda_manual_seed(0)
preset = get_preset("qwen3-30b-a3b").replace(num_layers=3)
model = build_model(preset.transformer_config(params_dtype=torch.bfloat16), "w4a16",
                    targets="experts", attention_backend=backend, **preset.model_kwargs())
B, P = 32, 18
prompts = [[1 + (i * 7 + j) % 90 for j in range(P)] for i in range(B)]


def generate(n):
    gen = torch.Generator(device="cuda").manual_seed(0)
    with torch.no_grad():
        out = generate_batch(model, prompts, SamplingParams(max_new_tokens=n, temperature=1.0,
                             stop_token_ids=()), 0, gen, "cuda", cuda_graph=True)
    return [s.sampler_logprobs for s in out]


def timed(fn):
    torch.cuda.synchronize(); t = time.perf_counter(); r = fn(); torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e3, r


def first_diff(a, b):
    pos = [next((i for i, (x, y) in enumerate(zip(ra, rb)) if x != y), None) for ra, rb in zip(a, b)]
    pos = [p for p in pos if p is not None]
    return (min(pos), len(pos)) if pos else "identical"


tokens = torch.randint(0, 151936, (4, 512), device="cuda")
positions = torch.arange(512, device="cuda").expand(4, -1)
mask = torch.triu(torch.ones(512, 512, dtype=torch.bool, device="cuda"), 1)[None, None]


def train_step():
    model.zero_grad()
    logits = model(tokens, positions, mask)
    logits.float().logsumexp(-1).mean().backward()
    return [p.grad.clone() for p in model.parameters() if p.grad is not None][:40]


model.eval(); generate(8)
model.train(); train_step()
from megatron.core.transformer.moe.moe_layer import MoELayer
dispatchers = [m.token_dispatcher for m in model.modules() if isinstance(m, MoELayer)]
top_k = dispatchers[0].routes_per_token
torch.utils.deterministic.fill_uninitialized_memory = False
for combine, det in [(c, d) for _ in range(2) for c in ("megatron", "routed") for d in (False, True)]:
    for d in dispatchers:
        d.routes_per_token = top_k if combine == "routed" else None
    torch.use_deterministic_algorithms(det)
    model.eval()
    generate(8)
    t32, _ = timed(lambda: generate(32)); t224, a = timed(lambda: generate(224))
    _, b = timed(lambda: generate(224))
    model.train()
    train_step()
    tt = []
    grads = []
    for _ in range(3):
        ms, g = timed(train_step); tt.append(ms); grads.append(g)
    same = all(torch.equal(x, y) for x, y in zip(grads[0], grads[1]))
    print(f"{backend} combine={combine} deterministic={det}: steady decode step {(t224 - t32) / 192:.3f} ms; "
          f"224-token generations repeated: {first_diff(a, b)}; train fwd+bwd 4x512 "
          f"{min(tt):.1f} ms (min of 3), gradients repeated: {same}", flush=True)
