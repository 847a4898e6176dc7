"""The fused fc1 + SwiGLU kernel gives the unfused path's numbers: the same GEMM tiles, then
quant.ops.reference_gated_activation's roundings (bit for bit on the GPU, whose expf and
division are torch's; the interpreter's exp is numpy's, so there within one bf16 ulp)."""
import pytest
import torch

from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.ops import reference_gated_activation
from qarl_kernels import w4a16_gemm
from qarl_kernels.w4a16_gemm import (W4A16Config, w4a16_grouped_linear, w4a16_grouped_matmul,
                                     w4a16_grouped_swiglu, w4a16_grouped_swiglu_op)


def _case(counts, k, group, device, ffn=24):
    torch.manual_seed(0)
    qweight = get_scheme(f"w4a16-g{group}").quantize_weight(
        0.5 * torch.randn(len(counts), 2 * ffn, k, device=device))
    x = torch.randn(sum(counts), k, device=device).bfloat16()
    return x, qweight, torch.tensor(counts)


def _assert_same(actual, expected, device):
    if device.type == "cuda":
        assert torch.equal(actual, expected)
    else:
        torch.testing.assert_close(actual.float(), expected.float(), rtol=2**-7, atol=0)


@pytest.mark.parametrize("counts", [[3, 0, 17, 1], [0, 0, 0, 6], [1]])
@pytest.mark.parametrize("config", [W4A16Config(16, 16), W4A16Config(32, 32, block_k=128)])
def test_fused_equals_gemm_then_gated_activation(counts, config, device):
    x, qweight, tokens = _case(counts, 256, 64, device)
    want = reference_gated_activation(w4a16_grouped_matmul(x, qweight, tokens, config))
    got = w4a16_grouped_swiglu(x, qweight, tokens, config)
    assert got.shape == (x.shape[0], 24) and got.dtype == torch.bfloat16
    _assert_same(got, want, device)


def test_fused_default_tiles_of_mid_batches(device):
    """22 rows per expert: the 64-token tile with half the unfused weight rows."""
    x, qweight, tokens = _case([40, 0, 30, 20], 256, 64, device)
    want = reference_gated_activation(w4a16_grouped_matmul(x, qweight, tokens))
    _assert_same(w4a16_grouped_swiglu(x, qweight, tokens), want, device)


def test_fused_with_a_partial_last_k_step(device):
    """K = 160: the default 128-input step leaves a masked tail of one 32-group."""
    x, qweight, tokens = _case([5, 2], 160, 32, device)
    want = reference_gated_activation(w4a16_grouped_matmul(x, qweight, tokens))
    _assert_same(w4a16_grouped_swiglu(x, qweight, tokens), want, device)


def test_registered_op_fuses_only_up_to_its_batch_limit(device, monkeypatch):
    x, qweight, tokens = _case([5, 0, 3], 64, 32, device)
    want = reference_gated_activation(w4a16_grouped_linear(x, qweight, tokens))
    fused = []
    monkeypatch.setattr(w4a16_gemm, "w4a16_grouped_swiglu",
                        lambda *a, **kw: fused.append(a) or w4a16_grouped_swiglu(*a, **kw))
    _assert_same(w4a16_grouped_swiglu_op(x, qweight, tokens), want, device)
    assert len(fused) == 1  # 8 rows <= 3 experts x the limit
    monkeypatch.setattr(w4a16_gemm, "FUSED_SWIGLU_ROWS_PER_EXPERT", 2)
    assert torch.equal(w4a16_grouped_swiglu_op(x, qweight, tokens), want)
    assert len(fused) == 1


def test_bad_inputs_name_the_argument(device):
    x, qweight, tokens = _case([2, 1], 64, 32, device)
    with pytest.raises(ValueError, match="split_k=1"):
        w4a16_grouped_swiglu(x, qweight, tokens, W4A16Config(16, 16, split_k=2))
    odd = get_scheme("w4a16-g32").quantize_weight(torch.randn(2, 15, 64, device=device))
    with pytest.raises(ValueError, match="qweight: 15 output rows"):
        w4a16_grouped_swiglu(x, odd, tokens)
