"""Session 31: Megatron's MoE combine against the routed sums, timed without the generate loop's
noise: lone replays of the captured decode step (batch 32, 3 layers of the reduced
Qwen3-30B-A3B, W4A16, sdpa), and the GPU time of a forward + backward of 4 x 512 tokens,
alternating the two combines three times in one process; then each one's combine kernels
in a profile of 20 replays."""
import collections, json, statistics, sys

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

from megatron_qarl.models import build_model, get_preset
from megatron_qarl.rollout.embedded.decode_graph import CachedForward
from megatron.core import parallel_state, tensor_parallel
from megatron.core.transformer.moe.moe_layer import MoELayer

dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29531", rank=0, world_size=1)
torch.cuda.set_device(0)
parallel_state.initialize_model_parallel()
tensor_parallel.model_parallel_cuda_manual_seed(0)
preset = get_preset("qwen3-30b-a3b").replace(num_layers=3)
model = build_model(preset.transformer_config(params_dtype=torch.bfloat16), "w4a16",
                    targets="experts", attention_backend="sdpa", **preset.model_kwargs())
dispatchers = [m.token_dispatcher for m in model.modules() if isinstance(m, MoELayer)]
top_k = dispatchers[0].routes_per_token
B, P = 32, 18
ids = torch.tensor([[1 + (i * 7 + j) % 90 for j in range(P)] for i in range(B)], device="cuda")
tokens = torch.randint(0, 151936, (4, 512), device="cuda")
positions = torch.arange(512, device="cuda").expand(4, -1)


def use(combine):
    for d in dispatchers:
        d.routes_per_token = top_k if combine == "routed" else None


def step_graph():
    model.eval()
    fwd = CachedForward(model, B, P + 100, "cuda", True)
    with torch.no_grad():
        fwd(ids, 0); nxt = ids[:, -1:]
        fwd(nxt, P); fwd(nxt, P + 1)  # eager bucket entry, then capture + replay
    return fwd


def events_ms(fn, n):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(n): fn()
    e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e) / n


def train():
    model.train(); model.zero_grad()
    model(tokens, positions, None).float().logsumexp(-1).mean().backward()


def busy_ms(fn, name):
    """Summed GPU time of one call of fn, by the profiler's kernel records."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(); torch.cuda.synchronize()
    prof.export_chrome_trace(f"/tmp/{name}.json")
    ev = [x for x in json.load(open(f"/tmp/{name}.json"))["traceEvents"]
          if x.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "dur" in x]
    return sum(x["dur"] for x in ev) / 1e3, ev


torch.utils.deterministic.fill_uninitialized_memory = False
graphs = {}
for det in (False, True):
    torch.use_deterministic_algorithms(det)
    replay, trains, busy = (collections.defaultdict(list) for _ in range(3))
    for _ in range(3):
        for combine in ("megatron", "routed"):
            use(combine)
            fwd = step_graph(); g = fwd.graph
            for _ in range(20): g.replay()
            replay[combine].append(events_ms(g.replay, 200))
            graphs[combine, det] = fwd
            train(); train()
            trains[combine].append(min(events_ms(train, 1) for _ in range(5)))
            busy[combine].append(busy_ms(train, "train")[0])
    for combine in ("megatron", "routed"):
        print(f"deterministic={det} {combine}: lone replay of the decode step "
              f"{statistics.median(replay[combine]):.3f} ms ({', '.join(f'{v:.3f}' for v in replay[combine])}); "
              f"train fwd+bwd wall {statistics.median(trains[combine]):.1f} ms "
              f"({', '.join(f'{v:.1f}' for v in trains[combine])}), GPU busy "
              f"{statistics.median(busy[combine]):.2f} ms ({', '.join(f'{v:.2f}' for v in busy[combine])})", flush=True)
    use("megatron"); _, ev_m = busy_ms(train, "m")
    use("routed"); _, ev_r = busy_ms(train, "r")
    dm, dr = collections.Counter(), collections.Counter()
    for x in ev_m: dm[x["name"][:90]] += x["dur"]
    for x in ev_r: dr[x["name"][:90]] += x["dur"]
    diff = {k: dr[k] - dm[k] for k in set(dm) | set(dr)}
    print(f"  train kernels, routed - megatron (deterministic={det}):")
    for k, v in sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:10]:
        print(f"    {v/1e3:+7.3f} ms (megatron {dm[k]/1e3:.3f}, routed {dr[k]/1e3:.3f}): {k}")
