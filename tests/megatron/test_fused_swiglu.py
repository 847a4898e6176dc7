"""Forwards without autograd (rollout, old logprobs) run the experts as one registered op
(W4A16: fc1 + SwiGLU fused; FP8: the SwiGLU writes fc2's FP8 input); training forwards keep
fc1's output for the backward and apply the SwiGLU as an op of its own, one kernel each way
on CUDA. Both give the same loss."""
import pytest
import torch

from megatron_qarl.models import QWEN3_MOE_TINY
from megatron_qarl.quant import ops
from qarl_kernels import fp8_gemm, w4a16_gemm

from tiny_qwen3 import batch, build_tiny, loss_of, token_losses, triton_kernels_on_cpu

# scheme -> (registry key, grouped op, experts op) of the CUDA registration
KERNELS = {
    "w4a16-g32": ("W4A16", w4a16_gemm.w4a16_grouped_linear, w4a16_gemm.w4a16_swiglu_experts),
    "fp8-block": ("FP8Block", fp8_gemm.fp8_block_grouped_linear, fp8_gemm.fp8_swiglu_experts),
}


@triton_kernels_on_cpu
@pytest.mark.parametrize("scheme", sorted(KERNELS))
def test_no_grad_forward_runs_the_fused_experts(scheme, single_process, monkeypatch):
    name, grouped, experts = KERNELS[scheme]
    calls = []

    def counting(x, fc1, fc2, tokens_per_expert, probs, routed_rows):
        assert routed_rows is None  # the all-to-all hands over routed rows only: no padding
        calls.append(x.shape[0])
        return experts(x, fc1, fc2, tokens_per_expert, probs, routed_rows)

    # the CUDA registration, on CPU (the kernels run under Triton's interpreter)
    monkeypatch.setitem(ops._GROUPED, (name, "cpu"), grouped)
    monkeypatch.setitem(ops._SWIGLU_EXPERTS, (name, "cpu"), counting)
    model = build_tiny(scheme, targets="experts", params_dtype=torch.bfloat16)
    tokens, positions = batch(seed=5)
    trained = token_losses(model, tokens, positions)
    assert calls == []  # autograd on: fc1, then torch's activation, then fc2
    with torch.no_grad():
        fused = token_losses(model, tokens, positions)
    layers = model.config.num_layers
    top_k = model.config.moe_router_topk
    assert len(calls) == layers and sum(calls) == tokens.numel() * top_k * layers
    # each token's loss, not their sum: the sum of ~200 hid the router probs left out of one
    # path (2.4e-4 relative; a review's mutation)
    torch.testing.assert_close(fused, trained.detach(), rtol=1e-5, atol=1e-5)


@triton_kernels_on_cpu
def test_training_swiglu_kernels_give_torchs_loss_and_grads(single_process, monkeypatch):
    """The training forward's SwiGLU as the CUDA registration's one-pass kernels (on CPU under
    Triton's interpreter) against torch's composite: the same loss; the router's and the
    experts' grads as close as bf16 grads of one computation in two summation orders."""
    from qarl_kernels.swiglu import gated_silu

    calls = []

    def counting(h):
        calls.append(h.shape[0])
        return gated_silu(h)

    def loss_and_grads():
        torch.manual_seed(3)
        model = build_tiny("w4a16-g32", targets="experts", params_dtype=torch.bfloat16)
        loss = loss_of(model, *batch(seed=5))
        loss.backward()
        return loss.detach(), {n: p.grad.float() for n, p in model.named_parameters()
                               if ".mlp." in n and p.grad is not None}

    want, want_grads = loss_and_grads()
    monkeypatch.setitem(ops._GATED_ACTIVATION, "cpu", counting)
    got, got_grads = loss_and_grads()
    assert len(calls) == QWEN3_MOE_TINY.num_layers
    torch.testing.assert_close(got, want, rtol=1e-3, atol=0)
    assert got_grads.keys() == want_grads.keys() and any("router" in n for n in got_grads)
    for name, grad in got_grads.items():
        error = (grad - want_grads[name]).norm() / want_grads[name].norm()
        assert error < 2**-6, (name, error)
