"""Session 30: the generate loop's steady decode step against the graph replayed alone:
host time waiting in LaggedAll.read vs queuing, and the kernel timeline of a profiled
generation (steps past the capture): busy, span, and the largest gaps with neighbours."""
import collections, json, sys, time

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

from megatron_qarl.models import build_model, get_preset
from megatron_qarl.rollout.base import SamplingParams
from megatron_qarl.rollout.embedded import generate as G
from megatron.core import parallel_state, tensor_parallel

layers = int(sys.argv[1]); scheme = sys.argv[2] if len(sys.argv) > 2 else "w4a16"
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29515", rank=0, world_size=1)
torch.cuda.set_device(0)
parallel_state.initialize_model_parallel()
tensor_parallel.model_parallel_cuda_manual_seed(0)
preset = get_preset("qwen3-30b-a3b").replace(num_layers=layers)
model = build_model(preset.transformer_config(params_dtype=torch.bfloat16), scheme,
                    targets="experts", attention_backend="local",
                    grouped_experts=scheme == "none", **preset.model_kwargs()).eval()
B, P, N = 32, 18, 224
gen = torch.Generator(device="cuda").manual_seed(0)
prompts = [[1 + (i * 7 + j) % 90 for j in range(P)] for i in range(B)]
params = SamplingParams(max_new_tokens=N, temperature=1.0, stop_token_ids=())
waits, marks = [], []
orig = G.LaggedAll.read
def read(self):
    t = time.perf_counter(); r = orig(self); waits.append(time.perf_counter() - t)
    marks.append(time.perf_counter()); return r
G.LaggedAll.read = read
run = lambda: G.generate_batch(model, prompts, params, 0, gen, "cuda", cuda_graph=True)
with torch.no_grad():
    run(); waits.clear(); marks.clear()
    torch.cuda.synchronize(); run(); torch.cuda.synchronize()
    w = waits[20:-2]; iv = [b - a for a, b in zip(marks[20:-2], marks[21:-1])]
    print(f"== {layers} layers {scheme}: loop iteration {sum(iv)/len(iv)*1e3:.3f} ms, of which "
          f"waiting in read {sum(w)/len(w)*1e3:.3f} ms (median {sorted(w)[len(w)//2]*1e3:.3f})")
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        run(); torch.cuda.synchronize()
trace = f"/tmp/loop_{layers}.json"; prof.export_chrome_trace(trace)
allev = json.load(open(trace))["traceEvents"]
ev = sorted((x for x in allev if x.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
             and "dur" in x), key=lambda x: x["ts"])
launch = sorted(x["ts"] for x in allev if x.get("name") == "cudaGraphLaunch")
steady = [t for t in launch[10:-2]]
lo, hi = steady[0], steady[-1]
sel = [x for x in ev if lo <= x["ts"] < hi]
n = len(steady) - 1
busy = sum(x["dur"] for x in sel)
gaps = collections.Counter(); cnt = collections.Counter()
for a, b in zip(sel, sel[1:]):
    gap = b["ts"] - (a["ts"] + a["dur"])
    k = (a["name"][:60], b["name"][:60]); gaps[k] += gap; cnt[k] += 1
print(f"  profiled steady steps: {(hi-lo)/n/1e3:.3f} ms per step, GPU busy {busy/n/1e3:.3f} ms, "
      f"{len(sel)/n:.0f} GPU ops, gaps {sum(gaps.values())/n/1e3:.3f} ms")
def by_name(events, steps):
    c = collections.Counter()
    for x in events:
        c[x["name"][:90]] += x["dur"] / steps
    return c
loop = by_name(sel, n)
with torch.no_grad():
    fwd = G.CachedForward(model, B, P + 100, "cuda", True)
    ids = torch.tensor(prompts, device="cuda"); nxt = ids[:, -1:]
    fwd(ids, 0); fwd(nxt, P); fwd(nxt, P + 1)
    for _ in range(5): fwd.graph.replay()
    with profile(activities=[ProfilerActivity.CUDA]) as prof2:
        for _ in range(20): fwd.graph.replay()
        torch.cuda.synchronize()
prof2.export_chrome_trace("/tmp/replay.json")
rev = [x for x in json.load(open("/tmp/replay.json"))["traceEvents"]
       if x.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "dur" in x]
alone = by_name(rev, 20)
diff = collections.Counter({k: loop[k] - alone[k] for k in set(loop) | set(alone)})
print(f"  replay alone busy {sum(alone.values())/1e3:.3f} ms; per-kernel loop - alone, largest:")
for k, d in diff.most_common(12):
    print(f"   {d:+8.1f} us/step (loop {loop[k]:.1f}, alone {alone[k]:.1f}): {k}")
for (a, b), t in gaps.most_common(4):
    print(f"   {t/n:8.1f} us/step x{cnt[(a,b)]/n:.1f}: {a} -> {b}")
cpu = collections.Counter(); cc = collections.Counter()
for x in allev:
    if x.get("cat") in ("cuda_runtime", "cuda_driver") and lo <= x.get("ts", 0) < hi:
        cpu[x["name"]] += x["dur"]; cc[x["name"]] += 1
for k, t in cpu.most_common(8):
    print(f"   host {k}: {t/n:.1f} us/step x{cc[k]/n:.1f}")
