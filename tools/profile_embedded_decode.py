"""Where a decode step of the embedded rollout engine spends its time: per-step wall time, host
syncs per step, and the top operators by host and by device time (torch.profiler), for a
reduced Qwen3-30B-A3B (exact layers, random weights), on one GPU or, under torchrun, with
tensor or expert parallelism (rank 0 prints; each data-parallel rank decodes its own batch).

    python tools/profile_embedded_decode.py --layers 3 --batch 32 --new-tokens 64
    python tools/profile_embedded_decode.py --layers 3 --batch 32 --new-tokens 64 --no-cuda-graph
    torchrun --nproc-per-node 2 tools/profile_embedded_decode.py --layers 3 \
        --expert-model-parallel-size 2

A first generation of `--warmup-tokens` compiles and allocates. Generations of
`--warmup-tokens` and `--new-tokens` are then timed: the slope between them is the steady
decode step, the intercept a batch's fixed cost (prompt window, the warm-up step before the
first capture, the captures). The profile covers one whole generation of `--new-tokens`.
"""
from __future__ import annotations

import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

from megatron_qarl.models import build_model, get_preset
from megatron_qarl.rollout.base import SamplingParams
from megatron_qarl.rollout.embedded.decode_graph import graph_blocker
from megatron_qarl.rollout.embedded.generate import generate_batch
from megatron_qarl.trainer.distributed import use_deterministic_algorithms
# after megatron_qarl, which quiets megatron-core's import warnings about TE and Apex
from megatron.core import parallel_state, tensor_parallel


def _generate(model, args, generator, new_tokens):
    offset = parallel_state.get_data_parallel_rank()  # each data-parallel rank its own prompts
    prompts = [[1 + (i * 7 + j + offset) % 90 for j in range(args.prompt_len)]
               for i in range(args.batch)]
    params = SamplingParams(max_new_tokens=new_tokens, temperature=1.0, stop_token_ids=())
    sync_group = (parallel_state.get_data_parallel_group()
                  if args.expert_model_parallel_size > 1 else None)
    return generate_batch(model, prompts, params, 0, generator, "cuda",
                          window_multiple=args.tensor_model_parallel_size,
                          sync_group=sync_group, cuda_graph=args.cuda_graph)


def _timed_ms(fn) -> float:
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3


def decode_step_ms(short_ms: float, short_tokens: int, long_ms: float,
                   long_tokens: int) -> tuple[float, float, float]:
    """Wall and steady ms per step, fixed ms: the wall figure mixes the steady one and the fixed."""
    steady_ms = (long_ms - short_ms) / (long_tokens - short_tokens)
    return long_ms / long_tokens, steady_ms, short_ms - short_tokens * steady_ms


def per_step_profile(events, steps: int) -> tuple[float, float, float, float]:
    """Per decode step (GPU ms, launches, syncs, memcpys): runs of any --new-tokens compare."""
    syncs = sum(e.count for e in events if e.key in ("cudaStreamSynchronize",
                                                     "cudaDeviceSynchronize"))
    copies = sum(e.count for e in events if e.key == "cudaMemcpyAsync")
    launches = sum(e.count for e in events if e.key in ("cudaLaunchKernel", "cuLaunchKernel",
                                                        "cudaLaunchKernelExC",
                                                        "cudaGraphLaunch"))
    gpu_us = sum(e.self_device_time_total for e in events if e.device_type.name == "CUDA")
    return gpu_us / steps / 1e3, launches / steps, syncs / steps, copies / steps


def main():
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--scheme", default="w4a16")
    p.add_argument("--quant-targets", default="experts", choices=("experts", "experts+attention"),
                   help="the trainer's flag: which layers run --scheme")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--prompt-len", type=int, default=18)
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--warmup-tokens", type=int, default=8)
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--trace", default=None, help="write a Chrome trace here")
    p.add_argument("--cuda-graph", action=argparse.BooleanOptionalAction, default=True,
                   help="replay the decode steps from a CUDA graph, as the engine does")
    p.add_argument("--attention-backend", default="local", choices=("local", "sdpa"))
    p.add_argument("--tensor-model-parallel-size", type=int, default=1)
    p.add_argument("--expert-model-parallel-size", type=int, default=1)
    p.add_argument("--expert-tensor-parallel-size", type=int, default=1)
    p.add_argument("--deterministic-mode", action="store_true",
                   help="the trainer's flag: torch's deterministic algorithms (its cost here)")
    p.add_argument("--moe-grouped-gemm", action="store_true",
                   help="--scheme none: bf16 experts as grouped GEMMs (the trainer's flag)")
    args = p.parse_args()
    if args.new_tokens <= args.warmup_tokens:
        p.error(f"--new-tokens ({args.new_tokens}) must exceed --warmup-tokens "
                f"({args.warmup_tokens}): the steady step is the slope between the two")
    if not torch.cuda.is_available():
        raise SystemExit("profile_embedded_decode needs a CUDA GPU")

    if args.deterministic_mode:
        use_deterministic_algorithms()
    if "WORLD_SIZE" in os.environ:  # torchrun
        dist.init_process_group("nccl")
    else:
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29512", rank=0,
                                world_size=1)
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=args.tensor_model_parallel_size,
        expert_model_parallel_size=args.expert_model_parallel_size,
        expert_tensor_parallel_size=args.expert_tensor_parallel_size)
    tensor_parallel.model_parallel_cuda_manual_seed(0)
    preset = get_preset("qwen3-30b-a3b").replace(num_layers=args.layers)
    model = build_model(preset.transformer_config(params_dtype=torch.bfloat16), args.scheme,
                        targets=args.quant_targets, attention_backend=args.attention_backend,
                        grouped_experts=args.moe_grouped_gemm, **preset.model_kwargs()).eval()
    blocker = graph_blocker(model, "cuda")
    if args.cuda_graph and blocker is not None:
        raise SystemExit(f"--cuda-graph: {blocker}; pass --no-cuda-graph")
    lead = dist.get_rank() == 0
    generator = torch.Generator(device="cuda").manual_seed(0)

    _generate(model, args, generator, args.warmup_tokens)  # compiles, tunes, allocates
    short_ms = _timed_ms(lambda: _generate(model, args, generator, args.warmup_tokens))
    long_ms = _timed_ms(lambda: _generate(model, args, generator, args.new_tokens))
    step_ms, steady_ms, fixed_ms = decode_step_ms(short_ms, args.warmup_tokens, long_ms,
                                                  args.new_tokens)

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        _generate(model, args, generator, args.new_tokens)
        torch.cuda.synchronize()
    if args.trace:
        prof.export_chrome_trace(args.trace)
    events = prof.key_averages()
    gpu_ms, launches, syncs, copies = per_step_profile(events, args.new_tokens)
    if not lead:
        return
    print(events.table(sort_by="self_cpu_time_total", row_limit=args.top, max_name_column_width=60))
    print(events.table(sort_by="self_device_time_total", row_limit=args.top,
                       max_name_column_width=60))
    n = args.new_tokens
    graph = "CUDA graph" if args.cuda_graph else "eager"
    layout = (f"TP{args.tensor_model_parallel_size} EP{args.expert_model_parallel_size} "
              f"ETP{args.expert_tensor_parallel_size}, {dist.get_world_size()} GPUs")
    print(f"{args.layers} layers, {args.scheme} on {args.quant_targets}, {layout}, "
          f"batch {args.batch}, {graph}, "
          f"{args.attention_backend} attention"
          f"{', deterministic' if args.deterministic_mode else ''}: {step_ms:.2f} ms per decode "
          f"step (wall, unprofiled) = a steady step of {steady_ms:.2f} ms + a batch's fixed "
          f"{fixed_ms:.1f} ms / {n} (the slope and intercept between {args.warmup_tokens} and "
          f"{n} tokens; fixed: the prompt window, a warm-up step and the graph captures); per "
          f"step under the profiler: GPU busy {gpu_ms:.2f} ms, {launches:.0f} "
          f"kernel launches, {syncs:.1f} stream syncs, {copies:.1f} memcpy calls")


if __name__ == "__main__":
    main()
