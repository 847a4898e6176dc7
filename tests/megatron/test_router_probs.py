"""The router probs reach the experts in the dtype their SGLang kernel multiplies them in: fp32
for FP8 and INT8 (Triton's fused MoE takes fp32 top-k weights), Megatron's bf16 for W4A16
(Marlin rounds them to bf16). A bf16 model's FP8 experts got bf16 probs (2.9e-3 off SGLang's
fc2, docs/results/router_prob_dtype_cpu_2026-12-01)."""
import pytest
import torch
from megatron.core.transformer.moe.moe_layer import MoELayer

from tiny_qwen3 import batch, build_tiny, loss_of


def _probs_reaching_the_experts(model):
    seen = []
    for module in model.modules():
        if isinstance(module, MoELayer):
            module.experts.register_forward_pre_hook(
                lambda m, args: seen.append((args[2].dtype, args[2].detach().clone())))
            module.router.register_forward_hook(  # the gate GEMM's input
                lambda m, args, out: seen.append(("router input", args[0].dtype)))
    return seen


@pytest.mark.parametrize("scheme, dtype", [("fp8-block", torch.float32),
                                           ("int8", torch.float32),
                                           ("w4a16-g32", torch.bfloat16)])
def test_the_experts_get_their_kernels_prob_dtype(single_process, scheme, dtype):
    model = build_tiny(scheme, targets="experts", params_dtype=torch.bfloat16)
    seen = _probs_reaching_the_experts(model)
    tokens, positions = batch()
    loss_of(model, tokens, positions).backward()  # fp32 probs in a bf16 model train too
    assert {s[1] for s in seen if s[0] == "router input"} == {torch.bfloat16}
    assert {s[0] for s in seen if s[0] != "router input"} == {dtype}


def test_fp32_probs_are_the_bf16_ones_before_rounding(single_process):
    """Same experts chosen, the probs Megatron rounded to bf16 before."""
    routers = [next(m.router for m in build_tiny(scheme, targets="experts",
                                                 params_dtype=torch.bfloat16).modules()
                    if isinstance(m, MoELayer)) for scheme in ("fp8-block", "w4a16-g32")]
    logits = torch.randn(16, 1, routers[0].config.num_moe_experts).bfloat16()
    fp32, bf16 = (router.routing(logits)[0] for router in routers)
    assert fp32.dtype == torch.float32 and bf16.dtype == torch.bfloat16
    assert torch.equal(fp32 != 0, bf16 != 0)
    assert torch.equal(fp32.bfloat16(), bf16) and not torch.equal(fp32, bf16.float())
