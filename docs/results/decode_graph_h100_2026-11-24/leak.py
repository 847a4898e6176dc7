"""Does a graphed generation leave memory allocated? Allocated GiB after each of 4 generations,
graph and eager, and the largest live blocks (with their allocation stacks) after graphs."""
import gc, sys, torch, torch.distributed as dist
from megatron_qarl.models import build_model, get_preset
from megatron_qarl.rollout.base import SamplingParams
from megatron_qarl.rollout.embedded.generate import generate_batch
from megatron.core import parallel_state, tensor_parallel

dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29533", rank=0, world_size=1)
parallel_state.initialize_model_parallel(); tensor_parallel.model_parallel_cuda_manual_seed(0)
preset = get_preset("qwen3-30b-a3b").replace(num_layers=3)
model = build_model(preset.transformer_config(params_dtype=torch.bfloat16), "w4a16",
                    targets="experts", attention_backend=sys.argv[1] if len(sys.argv) > 1 else "local",
                    **preset.model_kwargs()).eval()
gen = torch.Generator(device="cuda").manual_seed(0)
prompts = [[1 + (i * 7 + j) % 90 for j in range(30)] for i in range(32)]
params = SamplingParams(max_new_tokens=512, temperature=1.0)
def gib(): gc.collect(); torch.cuda.synchronize(); return torch.cuda.memory_allocated() / 2**30
for graph in (False, True, False):
    for i in range(3):
        if graph and i == 1:
            torch.cuda.memory._record_memory_history(max_entries=400000, stacks="python")
        generate_batch(model, prompts, params, 0, gen, "cuda", cuda_graph=graph)
        print(f"graph={graph} run {i}: allocated {gib():.3f} GiB, reserved {torch.cuda.memory_reserved()/2**30:.3f}", flush=True)
    if graph:
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        blocks = []
        for seg in snap["segments"]:
            for b in seg["blocks"]:
                if b["state"] == "active_allocated" and b.get("frames"):
                    blocks.append((b["size"], seg.get("segment_pool_id"), b.get("frames", [])))
        blocks.sort(key=lambda t: -t[0])
        print(f"{len(blocks)} live blocks made in graphed runs 1-2, {sum(b[0] for b in blocks)/2**20:.1f} MiB; largest:")
        for size, pool, frames in blocks[:10]:
            where = " <- ".join(f"{f['filename'].split('/')[-1]}:{f['line']}:{f['name']}" for f in frames[:40]
                                if "site-packages/torch" not in f["filename"])
            print(f"  {size/2**20:.1f} MiB pool {pool}: {where[:900]}")
