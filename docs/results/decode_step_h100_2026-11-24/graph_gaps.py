"""Session 30: where a graphed decode step's time goes. Replays of the captured step alone
(back to back), the host cost of one replay() call, and the kernel timeline of replays:
kernels per step, their summed time, the span, and the largest gaps with their neighbours."""
import collections, json, os, sys, time

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

from megatron_qarl.models import build_model, get_preset
from megatron_qarl.rollout.base import SamplingParams
from megatron_qarl.rollout.embedded.decode_graph import CachedForward
from megatron_qarl.rollout.embedded.generate import generate_batch
from megatron.core import parallel_state, tensor_parallel

layers = int(sys.argv[1]); scheme = sys.argv[2] if len(sys.argv) > 2 else "w4a16"
out = os.environ.get("OUT", ".")
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29513", rank=0, world_size=1)
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
params = SamplingParams(max_new_tokens=64, temperature=1.0, stop_token_ids=())
with torch.no_grad():
    for _ in range(2):
        generate_batch(model, prompts, params, 0, gen, "cuda", cuda_graph=True)
    torch.cuda.synchronize(); t = time.perf_counter()
    generate_batch(model, prompts, params, 0, gen, "cuda", cuda_graph=True)
    torch.cuda.synchronize()
    gen_ms = (time.perf_counter() - t) * 1e3 / 64

    fwd = CachedForward(model, B, P + 100, "cuda", True)
    ids = torch.tensor(prompts, device="cuda")
    fwd(ids, 0); nxt = ids[:, -1:]
    fwd(nxt, P); fwd(nxt, P + 1)  # eager bucket entry, then capture + replay
    g = fwd.graph
    for _ in range(20): g.replay()
    torch.cuda.synchronize()
    host = []
    for _ in range(10):
        t = time.perf_counter(); g.replay(); host.append(time.perf_counter() - t)
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(200): g.replay()
    e.record(); torch.cuda.synchronize()
    replay_ms = s.elapsed_time(e) / 200
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(20): g.replay()
        torch.cuda.synchronize()
trace = f"/tmp/trace_{layers}_{scheme}.json"
prof.export_chrome_trace(trace)
ev = [x for x in json.load(open(trace))["traceEvents"]
      if x.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "dur" in x]
ev.sort(key=lambda x: x["ts"])
per = len(ev) // 20
busy = sum(x["dur"] for x in ev) / 20
span = (ev[-1]["ts"] + ev[-1]["dur"] - ev[0]["ts"]) / 20
gaps = collections.Counter(); gap_n = collections.Counter(); allgaps = []
for a, b in zip(ev, ev[1:]):
    gap = b["ts"] - (a["ts"] + a["dur"])
    allgaps.append(gap)
    key = (a["name"][:50], b["name"][:50])
    gaps[key] += gap; gap_n[key] += 1
allgaps.sort()
print(f"== {layers} layers {scheme}: generate {gen_ms:.2f} ms/step; replay alone "
      f"{replay_ms:.3f} ms; replay() host {min(host)*1e6:.0f}-{max(host)*1e6:.0f} us; "
      f"{per} GPU ops/step, busy {busy/1e3:.3f} ms, span {span/1e3:.3f} ms; gap median "
      f"{allgaps[len(allgaps)//2]:.2f} us, p90 {allgaps[int(len(allgaps)*.9)]:.2f} us, "
      f"sum/step {sum(allgaps)/20/1e3:.3f} ms")
for (a, b), total in gaps.most_common(12):
    print(f"  {total/20:7.1f} us/step over {gap_n[(a,b)]//20:3d}/step: {a} -> {b}")
names = collections.Counter(); dur = collections.Counter()
for x in ev:
    names[x["name"][:70]] += 1; dur[x["name"][:70]] += x["dur"]
for n, d in dur.most_common(15):
    print(f"  {d/20:8.1f} us/step {names[n]//20:3d} calls: {n}")
