"""Session 47, calls 6 and 7: the training step A B B A with one op of qarl_kernels.register swapped,
set in that module so that build_model's own registration of the CUDA ops keeps it. Session
46's dense_backward_ab.py and this session's lanes_ab.py (calls 1, 3, 4) and lanes_profile.py
(call 5) set quant.ops' registry alone, which build_model overwrote: each of their arms ran the
default op.
Usage: step_ab.py EXPERIMENT STEPS [LAYERS] (timed steps a run after 2 warm-up steps; LAYERS:
that many exact Qwen3-30B-A3B layers, vocabulary 32768, at 4 x 1024 tokens, instead of
qwen3-moe-200m at 4 and 32 x 1024)
  lanes: W4A16's quantizer writing the lane order, the reorder at the kernels' first call
         instead, and (a probe) the first without its NaN/inf check's host sync
  dense-backward: the dense STE backward on bf16 tensor cores (kernels/linear_backward.py),
         and the pure-torch reference's fp32 products instead, for W4A16, FP8 and INT8
  fp8-finite (call 7): FP8's weight quantizer counting NaN/inf in its pass, and the check
         before (a torch isfinite pass over the master, then the kernel)."""
import dataclasses
import functools
import os
import statistics
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, "tools")
from bench_megatron_layers import train  # noqa: E402
from megatron_qarl.models import get_preset  # noqa: E402
from megatron.core import parallel_state, tensor_parallel  # noqa: E402
from megatron_qarl.quant.errors import check_master_weight  # noqa: E402
from qarl_kernels import register  # noqa: E402
from qarl_kernels.fp8_quantize import fp8_block_quantize  # noqa: E402
from qarl_kernels.linear_backward import aligned_linear_backward  # noqa: E402
from qarl_kernels.w4a16_quantize import w4a16_quantize  # noqa: E402

def fp8_quantize_isfinite_pass(weight, scheme, name="weight"):
    """fp8_block_quantize's NaN/inf check before call 7: a torch pass, then the kernel."""
    check_master_weight(name, weight, check_finite=True)
    return fp8_block_quantize(weight, scheme, name, check_finite=False)


#: experiment -> (schemes, {arm: (name in qarl_kernels.register, op)}), the baseline arm second
EXPERIMENTS = {
    "lanes": (("w4a16",), {
        "fused lanes": ("w4a16_quantize", w4a16_quantize),
        "reorder at first call": ("w4a16_quantize",
                                  functools.partial(w4a16_quantize, lane_order=False)),
        "fused lanes, no NaN check (probe)": ("w4a16_quantize",
                                              functools.partial(w4a16_quantize,
                                                                check_finite=False)),
    }),
    "dense-backward": (("w4a16", "fp8-block", "int8"), {
        "bf16 tensor cores": ("aligned_linear_backward", aligned_linear_backward),
        "fp32 reference": ("aligned_linear_backward", None),
    }),
    "fp8-finite": (("fp8-block",), {
        "counted in the pass": ("fp8_block_quantize", fp8_block_quantize),
        "isfinite pass": ("fp8_block_quantize", fp8_quantize_isfinite_pass),
    }),
}


def use_op(name, op):
    """op registered as `name` for every model built next (None: the reference). Set in the
    register module, so that build_model's registration reads it where that registration runs
    each time (the trees of calls 6-8), and registered at once, for where it runs once a
    process (since f622b6c)."""
    setattr(register, name, op)
    register.register_cuda_kernels()


def step_ab(experiment, steps, preset, batches):
    schemes, arms = EXPERIMENTS[experiment]
    order = list(arms)
    baseline = order[1]
    for batch in batches:
        for scheme in schemes:
            times = {arm: [] for arm in arms}
            for arm in order + order[::-1]:
                use_op(*arms[arm])
                losses, seconds, *_ = train(preset, scheme, "experts+attention", batch, 1024,
                                            2 + steps, 1e-4, True)
                times[arm].append(statistics.median(seconds[2:]))
                print(f"batch {batch} {scheme} {arm}: {times[arm][-1]:.4f} s/step, loss "
                      f"{losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
            base = statistics.mean(times[baseline])
            for arm, ts in times.items():
                print(f"== batch {batch} {scheme} {arm}: {statistics.mean(ts):.4f} s/step "
                      f"({statistics.mean(ts) / base:.3f}x {baseline}'s)", flush=True)
    use_op(*arms[order[0]])


def start():
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29516", rank=0, world_size=1)
    torch.cuda.set_device(0)
    parallel_state.initialize_model_parallel()
    tensor_parallel.model_parallel_cuda_manual_seed(0)
    print(torch.cuda.get_device_name(), flush=True)


def qwen3_30b_layers(layers):
    return dataclasses.replace(get_preset("qwen3-30b-a3b"), num_layers=layers, vocab_size=32768)


def main(experiment, steps, layers=None):
    start()
    if layers:
        step_ab(experiment, int(steps), qwen3_30b_layers(int(layers)), (4,))
    else:
        step_ab(experiment, int(steps), get_preset("qwen3-moe-200m"), (4, 32))
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main(*sys.argv[1:])
