"""Session 30: a later key bucket captured at once (this tree) against an eager step first
(HEAD's decode_graph, .gpu/olddg): generation wall time and the loop iterations around each
bucket's entry, alternating, same model."""
import sys, time

import torch
import torch.distributed as dist

from megatron_qarl.models import build_model, get_preset
from megatron_qarl.rollout.base import SamplingParams
from megatron_qarl.rollout.embedded import generate as G
from megatron_qarl.rollout.embedded.decode_graph import CachedForward as New
from decode_graph_old import CachedForward as Old
from megatron.core import parallel_state, tensor_parallel

layers, backend = int(sys.argv[1]), sys.argv[2]
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29516", rank=0, world_size=1)
torch.cuda.set_device(0)
parallel_state.initialize_model_parallel()
tensor_parallel.model_parallel_cuda_manual_seed(0)
preset = get_preset("qwen3-30b-a3b").replace(num_layers=layers)
model = build_model(preset.transformer_config(params_dtype=torch.bfloat16), "w4a16",
                    targets="experts", attention_backend=backend, **preset.model_kwargs()).eval()
B, P, N = 32, 18, 500
prompts = [[1 + (i * 7 + j) % 90 for j in range(P)] for i in range(B)]
params = SamplingParams(max_new_tokens=N, temperature=1.0, stop_token_ids=())
marks = []
orig = G.LaggedAll.read
def read(self):
    marks.append(time.perf_counter()); return orig(self)
G.LaggedAll.read = read
res = {"old": [], "new": []}
samples = {}
with torch.no_grad():
    for rep in range(3):
        for name, cls in (("old", Old), ("new", New)):
            G.CachedForward = cls
            gen = torch.Generator(device="cuda").manual_seed(0)
            marks.clear(); torch.cuda.synchronize(); t = time.perf_counter()
            out = G.generate_batch(model, prompts, params, 0, gen, "cuda", cuda_graph=True)
            torch.cuda.synchronize(); res[name].append(time.perf_counter() - t)
            samples.setdefault(name, [s.response_ids for s in out])
            it = [(b - a) * 1e3 for a, b in zip(marks, marks[1:])]
            # iteration i runs the forward at start = P - 1 + i (i >= 1); buckets at 256, 512
            near = {s: [round(x, 1) for x in it[s - P: s - P + 3]] for s in (256, 512)}
            if rep > 0:
                print(f"  {name} rep {rep}: {res[name][-1]*1e3:.0f} ms; iterations (ms) from "
                      f"the bucket entries: {near}; median {sorted(it)[len(it)//2]:.2f}")
print(f"== {layers} layers {backend}, {N} tokens: old {min(res['old'][1:])*1e3:.0f} ms, "
      f"new {min(res['new'][1:])*1e3:.0f} ms (min of 2); same tokens: "
      f"{samples['old'] == samples['new']}")
