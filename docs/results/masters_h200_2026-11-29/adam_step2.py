"""Session 51, call 7 (call 6 ran adam_step.py, which left a CPU param for Megatron's Float16 optimizer to refuse): Megatron's optimizer step where it falls back to torch's AdamW (no TE or
Apex, as on this machine), with torch's default foreach implementation and with the fused one
the trainer now switches to (megatron_qarl.compat.fused_torch_adam), on 2 exact Qwen3-30B-A3B
layers (bf16 params, fp32 main params and grads: the trainer's --bf16). One forward and
backward fill the grads; each optimizer.step() is then timed (CUDA-synchronized, median of
STEPS after 2), and the params after the steps compared between the two.
Usage: adam_step2.py STEPS SCHEME"""
import os
import statistics
import sys
import time

import torch
from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer

sys.path.insert(0, "docs/results/lanes_h200_2026-11-29")
from megatron_qarl.compat.fused_torch_adam import torch_adams, use_fused_torch_adam  # noqa
from megatron_qarl.models import build_model  # noqa: E402
from megatron_qarl.trainer.optimizer import wrap_ddp  # noqa: E402
from step_ab import qwen3_30b_layers, start  # noqa: E402


def run(fused, steps, scheme):
    torch.manual_seed(0)
    preset = qwen3_30b_layers(2)
    config = preset.transformer_config(params_dtype=torch.bfloat16, bf16=True)
    module = build_model(config, scheme, targets="experts+attention", cuda_kernels=True,
                         **preset.model_kwargs()).cuda()
    model = wrap_ddp(module, config, use_distributed_optimizer=False)
    optimizer = get_megatron_optimizer(OptimizerConfig(
        optimizer="adam", lr=1e-5, weight_decay=0.01, clip_grad=1.0, bf16=True,
        params_dtype=torch.bfloat16), [model])
    switched = use_fused_torch_adam(optimizer) if fused else 0
    tokens = torch.randint(0, preset.vocab_size, (4, 1024), device="cuda")
    positions = torch.arange(1024, device="cuda").expand(4, 1024)
    model(tokens, positions, None, labels=tokens.roll(-1, 1)).mean().backward()
    seconds = []
    for _ in range(2 + steps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        optimizer.step()
        torch.cuda.synchronize()
        seconds.append(time.perf_counter() - t)
    n = sum(p.numel() for adam in torch_adams(optimizer) for g in adam.param_groups
            for p in g["params"])
    params = [p.detach().float().cpu() for p in module.parameters()]
    print(f"{'fused' if fused else 'foreach'}: {switched} torch AdamW switched, {n / 1e9:.2f}B "
          f"params stepped, optimizer.step {statistics.median(seconds[2:]) * 1e3:.1f} ms "
          f"(steps {', '.join(f'{s * 1e3:.1f}' for s in seconds)}), peak "
          f"{torch.cuda.max_memory_allocated() / 2**30:.2f} GiB", flush=True)
    del model, module, optimizer
    torch.cuda.empty_cache()
    return params


def main(steps, scheme):
    start()
    foreach = run(False, int(steps), scheme)
    fused = run(True, int(steps), scheme)
    worst = max(((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()
                for a, b in zip(fused, foreach))
    print(f"params after the steps, fused against foreach: largest difference {worst:.3e} of "
          f"a tensor's largest value", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main(*sys.argv[1:])
