"""Forwards without autograd (rollout, old logprobs) run the experts' fc1 + SwiGLU as one
registered op; training forwards keep the GEMM output for the backward. Both give the same
loss."""
import torch

from megatron_qarl.quant import ops
from qarl_kernels import w4a16_gemm

from tiny_qwen3 import batch, build_tiny, loss_of


def test_no_grad_forward_fuses_fc1_and_swiglu(single_process, monkeypatch):
    calls = []

    def counting(x, qweight, tokens_per_expert, probs):
        calls.append(x.shape[0])
        return w4a16_gemm.w4a16_grouped_swiglu_op(x, qweight, tokens_per_expert, probs)

    # the CUDA registration, on CPU (the kernels run under Triton's interpreter)
    monkeypatch.setitem(ops._GROUPED, ("W4A16", "cpu"), w4a16_gemm.w4a16_grouped_linear)
    monkeypatch.setitem(ops._GROUPED_SWIGLU, ("W4A16", "cpu"), counting)
    model = build_tiny("w4a16-g32", targets="experts", params_dtype=torch.bfloat16)
    tokens, positions = batch(seed=5)
    trained = loss_of(model, tokens, positions)
    assert calls == []  # autograd on: fc1, then torch's activation
    with torch.no_grad():
        fused = loss_of(model, tokens, positions)
    layers = model.config.num_layers
    top_k = model.config.moe_router_topk
    assert len(calls) == layers and sum(calls) == tokens.numel() * top_k * layers
    torch.testing.assert_close(fused, trained.detach(), rtol=1e-3, atol=0)
