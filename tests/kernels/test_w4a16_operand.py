"""A keep_operand W4A16 weight is dequantized once for every large-batch forward and backward
grad_input of its optimizer step, with the bits of dequantizing in each call."""
import dataclasses

import pytest
import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_gemm, w4a16_operand
from qarl_kernels.grouped_mm import torch_grouped_mm_available
from qarl_kernels.moe_backward import w4a16_grouped_grad_input
from qarl_kernels.w4a16_gemm import (DEQUANT_ROWS_PER_EXPERT, KEPT_OPERAND_ROWS_PER_EXPERT,
                                     WS_ROWS_PER_EXPERT, w4a16_grouped_linear)

E, N, K = 2, 64, 128
# the smallest batch on the dequantize + grouped_mm path with and without a kept operand (past
# the warp-specialized kernel's rows on Hopper)
ROWS = max(DEQUANT_ROWS_PER_EXPERT, KEPT_OPERAND_ROWS_PER_EXPERT, WS_ROWS_PER_EXPERT.stop) * E
# one step's micro-batches: the first routes nothing to expert 1, the later ones need it
TOKENS = [torch.tensor([ROWS, 0]), torch.tensor([ROWS // 2, ROWS // 2]),
          torch.tensor([1, ROWS - 1])]


@pytest.fixture
def dequantize_calls(operand_dequantize_calls, device):
    if not torch_grouped_mm_available(device):
        pytest.skip("the large-batch path needs torch._grouped_mm (CPU, or SM90+)")
    return operand_dequantize_calls


def _qweight(device):
    torch.manual_seed(0)
    return get_scheme("w4a16-g32").quantize_weight(torch.randn(E, N, K, device=device))


def _step(qweight, device):
    """Forward output and grad_input of each micro-batch."""
    outs = []
    for i, tokens in enumerate(TOKENS):
        g = torch.Generator(device=device).manual_seed(i)
        x = torch.randn(ROWS, K, generator=g, device=device).bfloat16()
        grad_out = torch.randn(ROWS, N, generator=g, device=device).bfloat16()
        outs += [w4a16_grouped_linear(x, qweight, tokens),
                 w4a16_grouped_grad_input(grad_out, qweight, tokens)]
    return outs


def test_kept_operand_is_made_once_with_the_per_call_bits(dequantize_calls, device):
    qweight = _qweight(device)
    per_call = _step(qweight, device)
    assert len(dequantize_calls) == 2 * len(TOKENS) and qweight.operand is None
    kept = dataclasses.replace(qweight, keep_operand=True)
    dequantize_calls.clear()
    reused = _step(kept, device)
    assert dequantize_calls == [None]  # once, all experts (expert 1 had no tokens at first)
    assert torch.equal(kept.operand, qweight.dequantize().bfloat16())
    for got, want in zip(reused, per_call):
        assert torch.equal(got, want)


def test_kept_operand_stays_out_of_experts_and_serving_tensors(device):
    kept = dataclasses.replace(_qweight(device), keep_operand=True)
    operand = w4a16_operand.w4a16_operand(kept, TOKENS[0])
    assert kept.operand is operand and ", operand=" not in repr(kept)
    expert = kept[1]  # what the publisher and the exporter read
    assert expert.operand is None and not expert.keep_operand
    assert set(kept.scheme.serving_tensors("p", expert)) == {
        "p.weight_packed", "p.weight_scale", "p.weight_shape"}


def test_kept_operand_moves_the_grouped_mm_threshold_down(dequantize_calls, device,
                                                         monkeypatch):
    """Between the two thresholds only a weight that keeps its operand skips the int4
    kernel: dequantizing in every call costs more than the kernel there."""
    monkeypatch.setattr(w4a16_gemm, "DEQUANT_ROWS_PER_EXPERT", 4)
    monkeypatch.setattr(w4a16_gemm, "KEPT_OPERAND_ROWS_PER_EXPERT", 2)
    qweight, tokens = _qweight(device), torch.tensor([3, 1])
    x = torch.randn(4, K, device=device).bfloat16()
    per_call = w4a16_grouped_linear(x, qweight, tokens)
    assert dequantize_calls == []  # 2 rows per expert: the int4 kernel
    kept = dataclasses.replace(qweight, keep_operand=True)
    reused = w4a16_grouped_linear(x, kept, tokens)
    assert dequantize_calls == [None]  # the kept operand, made once
    torch.testing.assert_close(reused.float(), per_call.float(), rtol=2**-7, atol=1e-2)
