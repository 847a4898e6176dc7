"""Worker of the quantized-dispatch tests (spawned processes import it by name)."""
import torch
import torch.distributed as dist
from megatron.core import parallel_state as ps

from megatron_qarl.compat.cpu_testing import init_parallel
from megatron_qarl.quant import FP8Block, Int8W8A8, ops
from qarl_kernels.fp8_gemm import fp8_block_grouped_linear, fp8_swiglu_experts
from qarl_kernels.fp8_quantize import fp8_quantize_packed_rows
from qarl_kernels.int8_gemm import int8_grouped_linear, int8_swiglu_experts
from qarl_kernels.int8_quantize import int8_quantize_packed_rows

from parallel_cases import LAYOUTS, load_full_state
from tiny_qwen3 import batch, build_tiny, loss_of

#: scheme -> (its class, the CUDA registration's grouped op, experts op, pre-dispatch quantizer)
KERNELS = {
    "fp8-block": (FP8Block, fp8_block_grouped_linear, fp8_swiglu_experts,
                  fp8_quantize_packed_rows),
    "int8": (Int8W8A8, int8_grouped_linear, int8_swiglu_experts, int8_quantize_packed_rows),
}


def cpu_key(scheme: str) -> tuple:
    return KERNELS[scheme][0].__name__, "cpu"


def register_kernels_on_cpu(scheme: str, registries=None):
    """The CUDA registration's experts ops of `scheme` for CPU tensors (Triton's interpreter),
    without the pre-dispatch quantizer; `registries` (a dict setter such as
    monkeypatch.setitem) defaults to plain assignment."""
    setitem = registries or (lambda registry, key, value: registry.__setitem__(key, value))
    _, grouped, experts, _ = KERNELS[scheme]
    setitem(ops._GROUPED, cpu_key(scheme), grouped)
    setitem(ops._SWIGLU_EXPERTS, cpu_key(scheme), experts)


def no_grad_losses(rank, world_size, scheme, layouts):
    """Per layout: the summed no-grad loss with the tokens quantized after dispatch (by the
    experts) and before it (packed rows through the all-to-all), and TP=1 EP=1's."""
    register_kernels_on_cpu(scheme)
    scheme_type, _, _, packer = KERNELS[scheme]
    tokens, positions = batch(seed=3, batch_size=2)
    init_parallel(1, 1, 1, seed=7)
    ref = build_tiny(scheme, targets="experts", params_dtype=torch.bfloat16)
    with torch.no_grad():
        ref_loss = loss_of(ref, tokens, positions).item()
    state = {n: p.detach().clone() for n, p in ref.named_parameters()}
    results = {}
    for name in layouts:
        init_parallel(*LAYOUTS[name], seed=11)
        model = build_tiny(scheme, targets="experts", params_dtype=torch.bfloat16)
        load_full_state(model, state)
        dp, dp_rank = ps.get_data_parallel_world_size(), ps.get_data_parallel_rank()
        rows = slice(None) if dp == 1 else slice(dp_rank, dp_rank + 1)
        losses = []
        for quantizer in (None, packer):
            ops.register_dispatch_quantizer(scheme_type, "cpu", quantizer)
            with torch.no_grad():
                loss = loss_of(model, tokens[rows], positions[rows])
            dist.all_reduce(loss, group=ps.get_data_parallel_group())
            losses.append(loss.item())
        results[name] = (*losses, ref_loss)
    return results
