"""Session 46, call 6: where the host time of a qwen3-moe-200m training step goes (batch 4 x
1024: ~25 ms of kernels a step against ~0.1 s of wall time, call 2's profiles). cProfile of
3 steps after 3 warm-up steps, per scheme; the functions by own time and by cumulative time.
Usage: host_profile.py SCHEME... (w4a16, fp8-block, int8; none+grouped for bf16 grouped)."""
import cProfile
import os
import pstats
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, "tools")
from megatron_qarl.layers import enable_cuda_kernels, install_quant_refresh_hook  # noqa: E402
from megatron_qarl.models import build_model, get_preset  # noqa: E402
from megatron.core import parallel_state, tensor_parallel  # noqa: E402
from megatron.core.transformer.moe.moe_utils import get_moe_layer_wise_logging_tracker  # noqa


def profile(name):
    scheme, grouped = ("none", True) if name == "none+grouped" else (name, False)
    torch.manual_seed(0)
    get_moe_layer_wise_logging_tracker().clear()
    preset = get_preset("qwen3-moe-200m")
    config = preset.transformer_config(params_dtype=torch.bfloat16)
    model = build_model(config, scheme, targets="experts+attention", cuda_kernels=True,
                        grouped_experts=grouped, **preset.model_kwargs())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    install_quant_refresh_hook(opt, model)
    tokens = torch.randint(0, preset.vocab_size, (4, 1024), device="cuda")
    positions = torch.arange(1024, device="cuda").expand(4, 1024)

    def step():
        opt.zero_grad()
        model(tokens, positions, None, labels=tokens.roll(-1, 1)).mean().backward()
        opt.step()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    prof.disable()
    stats = pstats.Stats(prof).strip_dirs()
    print(f"===== {name}: 3 steps", flush=True)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(45)
    sys.stdout.flush()


def main(names):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29513", rank=0, world_size=1)
    torch.cuda.set_device(0)
    parallel_state.initialize_model_parallel()
    tensor_parallel.model_parallel_cuda_manual_seed(0)
    enable_cuda_kernels()
    for name in names:
        profile(name)
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main(sys.argv[1:])
