"""Session 30: where --deterministic-mode's time goes: kernel time by name of a forward +
backward (4 x 512 tokens) and of eager decode forwards (batch 32), flag off / on / on without
torch's fill of uninitialized memory."""
import collections, os, sys
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

from megatron_qarl.models import build_model, get_preset
from megatron_qarl.rollout.embedded.decode_graph import CachedForward
from megatron.core import parallel_state, tensor_parallel

dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29519", rank=0, world_size=1)
torch.cuda.set_device(0)
parallel_state.initialize_model_parallel()
tensor_parallel.model_parallel_cuda_manual_seed(0)
preset = get_preset("qwen3-30b-a3b").replace(num_layers=3)
model = build_model(preset.transformer_config(params_dtype=torch.bfloat16), "w4a16",
                    targets="experts", **preset.model_kwargs())
tokens = torch.randint(0, 151936, (4, 512), device="cuda")
positions = torch.arange(512, device="cuda").expand(4, -1)
mask = torch.triu(torch.ones(512, 512, dtype=torch.bool, device="cuda"), 1)[None, None]
ids = torch.randint(0, 151936, (32, 18), device="cuda")


def train():
    model.train(); model.zero_grad()
    model(tokens, positions, mask).float().logsumexp(-1).mean().backward()


def decode():
    model.eval()
    with torch.no_grad():
        fwd = CachedForward(model, 32, 64, "cuda", False)
        fwd(ids, 0)
        for s in range(18, 26):
            fwd(ids[:, :1], s)


def kernels(fn):
    fn(); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(); torch.cuda.synchronize()
    c = collections.Counter()
    for e in prof.key_averages():
        if e.device_type.name == "CUDA":
            c[e.key[:80]] += e.self_device_time_total
    return c


modes = {"off": (False, True), "on": (True, True), "on-nofill": (True, False)}
for what, fn in (("train fwd+bwd", train), ("8 eager decode steps", decode)):
    got = {}
    for name, (det, fill) in modes.items():
        torch.use_deterministic_algorithms(det)
        torch.utils.deterministic.fill_uninitialized_memory = fill
        got[name] = kernels(fn)
    print(f"== {what}: GPU ms " + ", ".join(f"{n} {sum(c.values())/1e3:.2f}" for n, c in got.items()))
    diff = collections.Counter({k: got["on"][k] - got["off"][k] for k in set(got["on"]) | set(got["off"])})
    for k, d in diff.most_common(8):
        print(f"   {d/1e3:+7.2f} ms (off {got['off'][k]/1e3:.2f}, on {got['on'][k]/1e3:.2f}, "
              f"on-nofill {got['on-nofill'][k]/1e3:.2f}): {k}")
