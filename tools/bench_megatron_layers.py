"""One-GPU benchmark of the QaRL Megatron model: training step time and peak memory of each
quantization scheme against no quantization, and a short training run of the tiny model per
scheme, printed (and written as JSON with --out); docs/megatron_layers.md reads those runs.

    python tools/bench_megatron_layers.py --preset qwen3-moe-200m --batch 4 --seq 1024
    --keep-operand: also time W4A16 through the kernels with the operand kept per step
    --grouped-bf16: also time scheme none with grouped bf16 experts (--moe-grouped-gemm)
    --profile 2: after all timings, each Triton-op run again with two steps under
    torch.profiler: the kernels that took the most GPU time (last, because the profiler's
    CUDA tracing stays attached to the process and slows the steps timed after it)
"""
from __future__ import annotations

import argparse
import json
import os
import time

import torch
import torch.distributed as dist

from megatron_qarl.layers import enable_cuda_kernels, install_quant_refresh_hook
from megatron_qarl.models import build_model, get_preset
# after megatron_qarl, which quiets megatron-core's import warnings about TE and Apex
from megatron.core import parallel_state, tensor_parallel
from megatron.core.transformer.moe.moe_utils import get_moe_layer_wise_logging_tracker


def train(preset, scheme, targets, batch, seq, steps, lr, cuda_kernels, keep_operand=False,
          grouped_experts=False, profile_steps=0):
    """Losses and per-step seconds of `steps` AdamW steps on one fixed random batch (bf16), and
    the profiler's kernel table of `profile_steps` further steps (None without)."""
    torch.manual_seed(0)
    get_moe_layer_wise_logging_tracker().clear()  # sized by the first model's layer count
    config = preset.transformer_config(params_dtype=torch.bfloat16)
    model = build_model(config, scheme, targets=targets, cuda_kernels=cuda_kernels,
                        keep_operand=keep_operand, grouped_experts=grouped_experts,
                        **preset.model_kwargs())
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    install_quant_refresh_hook(opt, model)
    tokens = torch.randint(0, preset.vocab_size, (batch, seq), device="cuda")
    positions = torch.arange(seq, device="cuda").expand(batch, seq)

    def step(model=model, opt=opt):
        opt.zero_grad()
        loss = model(tokens, positions, None, labels=tokens.roll(-1, 1)).mean()
        loss.backward()
        opt.step()
        return loss

    losses, seconds = [], []
    torch.cuda.reset_peak_memory_stats()
    for _ in range(steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        loss = step()
        torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
        losses.append(loss.item())
    peak = torch.cuda.max_memory_allocated() / 2**30
    n_params = sum(p.numel() for p in model.parameters())
    kernels = kernel_table(step, profile_steps) if profile_steps else None
    del step, model, opt
    torch.cuda.empty_cache()
    return losses, seconds, peak, n_params, kernels


def mean_step_s(seconds: list[float], warmup: int) -> float:
    """The first steps compile, autotune and allocate: only the steps after them are steady."""
    return sum(seconds[warmup:]) / (len(seconds) - warmup)


def kernel_table(step, steps: int, rows: int = 25) -> str:
    """The GPU kernels of `steps` steps by their total time (the steps' sum, not a mean)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    return prof.key_averages().table(sort_by="self_device_time_total", row_limit=rows,
                                     max_name_column_width=90)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="qwen3-moe-200m")
    parser.add_argument("--schemes", default="none,w4a16,fp8-block,int8")
    parser.add_argument("--targets", default="experts+attention")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--tiny-steps", type=int, default=8)
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    parser.add_argument("--keep-operand", action="store_true",
                        help="also time each w4a16 scheme on the Triton ops with the experts' "
                             "dequantized operand kept for the step (--quant-keep-operand; "
                             "row '<scheme>+keep-operand')")
    parser.add_argument("--grouped-bf16", action="store_true",
                        help="also time scheme none with its experts as bf16 grouped GEMMs "
                             "(--moe-grouped-gemm; row 'none+grouped-experts')")
    parser.add_argument("--profile", type=int, default=0, metavar="STEPS",
                        help="after all timings, profile this many steps of each Triton-op run "
                             "and print the kernels that took the most GPU time")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("tools/bench_megatron_layers.py needs a CUDA GPU: it times training "
                         "steps on one; the CPU checks of these layers are tests/megatron")

    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29511", rank=0, world_size=1)
    torch.cuda.set_device(0)
    parallel_state.initialize_model_parallel()
    tensor_parallel.model_parallel_cuda_manual_seed(0)
    schemes = args.schemes.split(",")
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
               "tiny": {}, "bench": {}}

    tiny = get_preset("qwen3-moe-tiny")
    for scheme in schemes:
        try:
            losses, *_ = train(tiny, scheme, args.targets, 4, 64, args.tiny_steps, 3e-3, False)
        except Exception as err:  # noqa: BLE001 - e.g. a reference op without CUDA support
            results["tiny"][scheme] = f"failed: {err}"
            print(f"tiny {scheme}: failed: {err}", flush=True)
            continue
        results["tiny"][scheme] = losses
        print(f"tiny {scheme}: loss {losses[0]:.3f} -> {losses[-1]:.3f}", flush=True)

    preset = get_preset(args.preset)
    profiled = []
    for ops_name in ("reference", "triton"):
        # the ops registry is process-wide: the reference pass must run before registration
        if ops_name == "triton" and not enable_cuda_kernels():
            break
        runs = [(scheme, "", {}) for scheme in schemes]
        if ops_name == "triton" and args.keep_operand:
            runs += [(scheme, "+keep-operand", dict(keep_operand=True)) for scheme in schemes
                     if scheme.startswith("w4a16")]
        if ops_name == "triton" and args.grouped_bf16:
            runs += [("none", "+grouped-experts", dict(grouped_experts=True))]
        if ops_name == "triton":
            runs = [run for run in runs if run[0] != "none" or run[1]]
            profiled = runs
        for scheme, suffix, options in runs:
            name = scheme + suffix
            try:
                losses, seconds, peak, n, _ = train(preset, scheme, args.targets, args.batch,
                                                    args.seq, args.warmup + args.steps, 1e-4,
                                                    ops_name == "triton", **options)
            except Exception as err:  # noqa: BLE001 - record a failing scheme, bench the rest
                results["bench"][f"{name}/{ops_name}"] = f"failed: {err}"
                print(f"{name} [{ops_name}]: failed: {err}", flush=True)
                torch.cuda.empty_cache()
                continue
            step = mean_step_s(seconds, args.warmup)
            results["bench"][f"{name}/{ops_name}"] = dict(step_s=step, peak_gib=peak,
                                                          params=n, loss=losses[-1])
            print(f"{args.preset} {name} [{ops_name}]: {step:.3f} s/step, peak {peak:.2f} "
                  f"GiB, {n / 1e6:.0f}M params", flush=True)
    for scheme, suffix, options in profiled if args.profile else ():
        *_, kernels = train(preset, scheme, args.targets, args.batch, args.seq, args.warmup,
                            1e-4, True, profile_steps=args.profile, **options)
        print(f"{scheme + suffix} [triton], {args.profile} steps:\n{kernels}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main()
