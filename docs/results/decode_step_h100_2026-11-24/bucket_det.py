"""Session 30: are the reduced model's graphed generations deterministic? old/old, new/new
and old/new: the first response position where any row differs (the bucket is 256 keys;
prompts of 18 tokens, so response position 238 is the first step of the second bucket)."""
import sys

import torch
import torch.distributed as dist

from megatron_qarl.models import build_model, get_preset
from megatron_qarl.rollout.base import SamplingParams
from megatron_qarl.rollout.embedded import generate as G
from megatron_qarl.rollout.embedded.decode_graph import CachedForward as New
from decode_graph_old import CachedForward as Old
from megatron.core import parallel_state, tensor_parallel

layers, backend, graph = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "graph"
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29517", rank=0, world_size=1)
torch.cuda.set_device(0)
parallel_state.initialize_model_parallel()
tensor_parallel.model_parallel_cuda_manual_seed(0)
preset = get_preset("qwen3-30b-a3b").replace(num_layers=layers)
model = build_model(preset.transformer_config(params_dtype=torch.bfloat16), "w4a16",
                    targets="experts", attention_backend=backend, **preset.model_kwargs()).eval()
B, P, N = 32, 18, 300
prompts = [[1 + (i * 7 + j) % 90 for j in range(P)] for i in range(B)]
params = SamplingParams(max_new_tokens=N, temperature=1.0, stop_token_ids=())
runs = {}
with torch.no_grad():
    for name, cls in (("old", Old), ("new", New), ("old2", Old), ("new2", New)):
        G.CachedForward = cls
        gen = torch.Generator(device="cuda").manual_seed(0)
        out = G.generate_batch(model, prompts, params, 0, gen, "cuda", cuda_graph=graph)
        runs[name] = [(s.response_ids, s.sampler_logprobs) for s in out]

def first_diff(a, b):
    pos = [next((i for i, (x, y) in enumerate(zip(ra[1], rb[1])) if x != y), None)
           for ra, rb in zip(a, b)]
    pos = [p for p in pos if p is not None]
    return (min(pos), len(pos)) if pos else None
print(f"== {layers} layers {backend} graph={graph}: first logprob difference (position, rows): "
      f"old/old2 {first_diff(runs['old'], runs['old2'])}, new/new2 "
      f"{first_diff(runs['new'], runs['new2'])}, old/new {first_diff(runs['old'], runs['new'])}")
