"""Session 30: a graphed generation's fixed costs against its steady decode step: generate
at several lengths (slope and intercept), and the prefill, bucket-entry and capture steps
timed one by one."""
import os, sys, time

import torch
import torch.distributed as dist

from megatron_qarl.models import build_model, get_preset
from megatron_qarl.rollout.base import SamplingParams
from megatron_qarl.rollout.embedded.decode_graph import CachedForward
from megatron_qarl.rollout.embedded.generate import generate_batch
from megatron.core import parallel_state, tensor_parallel

layers = int(sys.argv[1]); scheme = sys.argv[2] if len(sys.argv) > 2 else "w4a16"
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29514", rank=0, world_size=1)
torch.cuda.set_device(0)
parallel_state.initialize_model_parallel()
tensor_parallel.model_parallel_cuda_manual_seed(0)
preset = get_preset("qwen3-30b-a3b").replace(num_layers=layers)
model = build_model(preset.transformer_config(params_dtype=torch.bfloat16), scheme,
                    targets="experts", attention_backend="local",
                    grouped_experts=scheme == "none", **preset.model_kwargs()).eval()
B, P = 32, 18
gen = torch.Generator(device="cuda").manual_seed(0)
prompts = [[1 + (i * 7 + j) % 90 for j in range(P)] for i in range(B)]


def timed(fn):
    torch.cuda.synchronize(); t = time.perf_counter(); r = fn(); torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e3, r


with torch.no_grad():
    run = lambda n: generate_batch(model, prompts, SamplingParams(
        max_new_tokens=n, temperature=1.0, stop_token_ids=()), 0, gen, "cuda", cuda_graph=True)
    run(16)
    res = {}
    for n in (32, 224, 32, 224, 480, 992):
        ms, _ = timed(lambda: run(n))
        res.setdefault(n, []).append(ms)
    a, b = min(res[32]), min(res[224])
    slope = (b - a) / 192
    print(f"== {layers} layers {scheme}: generate 32 / 224 / 480 / 992 tokens "
          f"{a:.1f} / {b:.1f} / {res[480][0]:.1f} / {res[992][0]:.1f} ms; steady step "
          f"{slope:.3f} ms, fixed {a - 32 * slope:.1f} ms; per step at 64 tokens "
          f"{(a - 32 * slope) / 64 + slope:.2f} ms; 480 tokens: {res[480][0]/480:.2f}, "
          f"992: {res[992][0]/992:.2f} ms/step")
    for rep in range(2):
        fwd = CachedForward(model, B, P + 100, "cuda", True)
        ids = torch.tensor(prompts, device="cuda"); nxt = ids[:, -1:]
        t0, _ = timed(lambda: fwd(ids, 0))
        t1, _ = timed(lambda: fwd(nxt, P))
        t2, _ = timed(lambda: fwd(nxt, P + 1))
        t3, _ = timed(lambda: fwd(nxt, P + 2))
        print(f"  prefill {t0:.1f} ms, bucket entry (eager) {t1:.1f} ms, capture + replay "
              f"{t2:.1f} ms, replay {t3:.2f} ms")
