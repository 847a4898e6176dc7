"""Session 31: where --deterministic-mode's remaining decode cost goes: kernels of the captured
decode step (3 layers, W4A16, sdpa, batch 32) with torch's deterministic algorithms off and on,
by name, and the host stacks of the ops whose kernels differ (eager step, record_shapes)."""
import collections, json

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

from megatron_qarl.models import build_model, get_preset
from megatron_qarl.rollout.embedded.decode_graph import CachedForward
from megatron.core import parallel_state, tensor_parallel

dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29533", rank=0, world_size=1)
torch.cuda.set_device(0)
parallel_state.initialize_model_parallel()
tensor_parallel.model_parallel_cuda_manual_seed(0)
preset = get_preset("qwen3-30b-a3b").replace(num_layers=3)
model = build_model(preset.transformer_config(params_dtype=torch.bfloat16), "w4a16",
                    targets="experts", attention_backend="sdpa", **preset.model_kwargs()).eval()
B, P = 32, 18
ids = torch.tensor([[1 + (i * 7 + j) % 90 for j in range(P)] for i in range(B)], device="cuda")
torch.utils.deterministic.fill_uninitialized_memory = False
kernels, ops = {}, {}
for det in (False, True):
    torch.use_deterministic_algorithms(det)
    fwd = CachedForward(model, B, P + 100, "cuda", True)
    with torch.no_grad():
        fwd(ids, 0); nxt = ids[:, -1:]
        fwd(nxt, P); fwd(nxt, P + 1)
        for _ in range(10): fwd.graph.replay()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(20): fwd.graph.replay()
            torch.cuda.synchronize()
        prof.export_chrome_trace("/tmp/k.json")
        c = collections.Counter()
        for x in json.load(open("/tmp/k.json"))["traceEvents"]:
            if x.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "dur" in x:
                c[x["name"][:100]] += x["dur"] / 20
        kernels[det] = c
        eager = CachedForward(model, B, P + 100, "cuda", False)
        eager(ids, 0)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            eager(nxt, P); torch.cuda.synchronize()
        ops[det] = {e.key: (e.count, e.device_time_total) for e in prof.key_averages()}
    print(f"deterministic={det}: decode step GPU busy {sum(c.values()) / 1e3:.3f} ms", flush=True)
names = set(kernels[False]) | set(kernels[True])
for n in sorted(names, key=lambda n: -abs(kernels[True][n] - kernels[False][n]))[:14]:
    print(f"  {kernels[True][n] - kernels[False][n]:+7.1f} us (off {kernels[False][n]:6.1f}, on {kernels[True][n]:6.1f}): {n}")
print("aten ops of one eager step whose GPU time or count differs (on - off):")
keys = set(ops[False]) | set(ops[True])
diff = {k: (ops[True].get(k, (0, 0))[1] - ops[False].get(k, (0, 0))[1],
            ops[True].get(k, (0, 0))[0] - ops[False].get(k, (0, 0))[0]) for k in keys if k.startswith("aten::")}
for k, (dt, dn) in sorted(diff.items(), key=lambda kv: -abs(kv[1][0]))[:14]:
    print(f"  {dt:+8.1f} us, {dn:+4d} calls: {k}")
