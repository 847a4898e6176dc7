"""Session 48, call 3: where a training step of 2 exact Qwen3-30B-A3B layers (4 x 1024 tokens,
experts+attention quantized, AdamW) makes the host wait for the GPU. Two warm-up steps, then
one step under torch.cuda.set_sync_debug_mode("warn"): each synchronizing call is listed with
the innermost frames of this project (megatron_qarl, qarl_kernels) and of megatron.core that
led to it, counted. Usage: sync_points.py SCHEME [SCHEME ...]"""
import collections
import os
import sys
import traceback
import warnings

import torch

sys.path.insert(0, "docs/results/lanes_h200_2026-11-29")
from megatron_qarl.layers import install_quant_refresh_hook  # noqa: E402
from megatron_qarl.models import build_model  # noqa: E402
from step_ab import qwen3_30b_layers, start  # noqa: E402

OURS = ("megatron_qarl", "qarl_kernels", "kernels/", "megatron/core")


def where(stack):
    frames = [f for f in stack if any(k in f.filename for k in OURS)]
    return " <- ".join(f"{f.filename.split('site-packages/')[-1].split(os.getcwd() + '/')[-1]}"
                       f":{f.lineno} {f.name}" for f in frames[::-1][:3])


def sync_points(scheme):
    preset = qwen3_30b_layers(2)
    torch.manual_seed(0)
    model = build_model(preset.transformer_config(params_dtype=torch.bfloat16), scheme,
                        targets="experts+attention", **preset.model_kwargs())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    install_quant_refresh_hook(opt, model)
    tokens = torch.randint(0, preset.vocab_size, (4, 1024), device="cuda")
    positions = torch.arange(1024, device="cuda").expand(4, 1024)

    def step():
        opt.zero_grad()
        model(tokens, positions, None, labels=tokens.roll(-1, 1)).mean().backward()
        opt.step()

    for _ in range(2):
        step()
    torch.cuda.synchronize()
    seen = collections.Counter()
    show = warnings.showwarning
    warnings.showwarning = lambda *a, **k: seen.update([where(traceback.extract_stack())])
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        step()
        torch.cuda.set_sync_debug_mode("default")
    warnings.showwarning = show
    print(f"== {scheme}: {sum(seen.values())} synchronizing calls in one step", flush=True)
    for place, n in seen.most_common():
        print(f"{n:4d}  {place}", flush=True)


if __name__ == "__main__":
    start()
    for name in sys.argv[1:]:
        sync_points(name)
