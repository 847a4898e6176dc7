"""Session 49, call 1: which call of a W4A16 training step (2 exact Qwen3-30B-A3B layers, 4 x
1024 tokens) makes the host wait for the GPU with no frame of this project on its stack
(session 48, calls 3-4). Two warm-up steps, then one step in three phases: the forward under
set_sync_debug_mode("warn") with every frame of each warning's stack printed (its thread
named), the backward under "error" with anomaly detection (which prints the forward call of
the autograd node that synchronized), the optimizer step under "warn".
Usage: sync_trace.py SCHEME"""
import sys
import threading
import traceback
import warnings

import torch

sys.path.insert(0, "docs/results/lanes_h200_2026-11-29")
from megatron_qarl.layers import install_quant_refresh_hook  # noqa: E402
from megatron_qarl.models import build_model  # noqa: E402
from step_ab import qwen3_30b_layers, start  # noqa: E402


def show(message, *args, **kwargs):
    text = str(message)
    if "forward call" in text:  # anomaly mode's trace of the failing node's forward
        print(f"-- anomaly mode: {text}")
        return
    print(f"-- sync warning in thread {threading.current_thread().name}: {text[:80]}")
    for frame in traceback.extract_stack()[:-1]:
        print(f"     {frame.filename.split('site-packages/')[-1]}:{frame.lineno} {frame.name}")


def phase(name, fn, mode):
    print(f"== {name} under {mode}", flush=True)
    torch.cuda.synchronize()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        torch.cuda.set_sync_debug_mode(mode)
        try:
            return fn()
        except RuntimeError as error:
            print(f"-- {name} raised: {str(error)[:300]}")
            traceback.print_exc(limit=-12)
        finally:
            torch.cuda.set_sync_debug_mode("default")
            torch.cuda.synchronize()


def trace(scheme):
    preset = qwen3_30b_layers(2)
    torch.manual_seed(0)
    model = build_model(preset.transformer_config(params_dtype=torch.bfloat16), scheme,
                        targets="experts+attention", **preset.model_kwargs())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    install_quant_refresh_hook(opt, model)
    tokens = torch.randint(0, preset.vocab_size, (4, 1024), device="cuda")
    positions = torch.arange(1024, device="cuda").expand(4, 1024)

    def loss():
        return model(tokens, positions, None, labels=tokens.roll(-1, 1)).mean()

    for _ in range(2):
        opt.zero_grad()
        loss().backward()
        opt.step()
    opt.zero_grad()
    value = phase("forward", loss, "warn")
    with torch.autograd.detect_anomaly(check_nan=False):
        value = phase("forward (anomaly mode, for the backward's trace)", loss, "default")
        phase("backward", value.backward, "error")
    phase("optimizer step", opt.step, "warn")


if __name__ == "__main__":
    start()
    trace(sys.argv[1])
