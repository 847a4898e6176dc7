import dataclasses

import pytest
import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_gemm
from qarl_kernels.w4a16_dequantize import w4a16_dequantize
from qarl_kernels.w4a16_gemm import (W4A16Config, w4a16_grouped_linear, w4a16_grouped_matmul,
                                     w4a16_linear)


def _setup(experts, n, k, group, device):
    torch.manual_seed(0)
    scheme = get_scheme(f"w4a16-g{group}")
    qweight = scheme.quantize_weight(torch.randn(experts, n, k, device=device))
    return scheme, qweight


@pytest.mark.parametrize("rows", [1, 5, 33])
@pytest.mark.parametrize("k,group", [(32, 32), (256, 128), (128, 64), (160, 32)])
def test_dense_matches_reference(rows, k, group, device, assert_gemm_close):
    scheme, qweight = _setup(1, 48, k, group, device)
    x = torch.randn(rows, k, device=device).bfloat16()
    assert_gemm_close(w4a16_linear(x, qweight[0]), scheme.reference_matmul(x, qweight[0]))


def test_one_token_takes_the_gemv(device, monkeypatch):
    """Dense calls of one token go to w4a16_gemv (no MMA tile of padding), unless a config
    names this file's tiles; two tokens do not."""
    _, qweight = _setup(1, 32, 64, 32, device)
    calls = []
    monkeypatch.setattr(w4a16_gemm, "w4a16_gemv", lambda x, q: calls.append(x.shape) or
                        x.new_zeros(x.shape[0], q.out_features))
    w4a16_linear(torch.randn(1, 64, device=device).bfloat16(), qweight[0])
    w4a16_linear(torch.randn(1, 64, device=device).bfloat16(), qweight[0], W4A16Config(16, 16))
    w4a16_linear(torch.randn(2, 64, device=device).bfloat16(), qweight[0])
    assert calls == [(1, 64)]


def test_dense_keeps_leading_dims(device, assert_gemm_close):
    scheme, qweight = _setup(1, 32, 64, 32, device)
    x = torch.randn(2, 3, 64, device=device).bfloat16()
    y = w4a16_linear(x, qweight[0])
    assert y.shape == (2, 3, 32)
    assert_gemm_close(y, scheme.reference_matmul(x, qweight[0]))


@pytest.mark.parametrize("counts", [[3, 0, 17, 1], [0, 0, 0, 6], [1, 0, 0, 0]])
@pytest.mark.parametrize("config", [None, W4A16Config(16, 16, split_k=2),
                                    W4A16Config(32, 32, block_k=128)])
def test_grouped_matches_reference_with_empty_experts(counts, config, device, assert_gemm_close):
    scheme, qweight = _setup(4, 40, 128, 32, device)
    tokens = torch.tensor(counts)
    x = torch.randn(sum(counts), 128, device=device).bfloat16()
    y = w4a16_grouped_matmul(x, qweight, tokens, config)
    assert_gemm_close(y, scheme.reference_grouped_matmul(x, qweight, tokens))


def test_no_rows(device):
    _, qweight = _setup(2, 16, 32, 32, device)
    y = w4a16_grouped_matmul(torch.empty(0, 32, device=device).bfloat16(), qweight,
                             torch.tensor([0, 0]))
    assert y.shape == (0, 16)


def test_dequantize_is_the_engine_operand_exactly(device):
    _, qweight = _setup(3, 24, 64, 32, device)
    want = qweight.dequantize().bfloat16()
    assert torch.equal(w4a16_dequantize(qweight), want)
    got = w4a16_dequantize(qweight, torch.tensor([2, 0, 1]))
    assert torch.equal(got[0], want[0]) and torch.equal(got[2], want[2])


def test_large_batch_path_matches_reference(device, monkeypatch, assert_gemm_close):
    """Above the threshold the op dequantizes then runs torch._grouped_mm."""
    monkeypatch.setattr(w4a16_gemm, "DEQUANT_ROWS_PER_EXPERT", 2)
    scheme, qweight = _setup(3, 32, 64, 32, device)
    tokens = torch.tensor([5, 0, 3])
    x = torch.randn(8, 64, device=device).bfloat16()
    assert_gemm_close(w4a16_grouped_linear(x, qweight, tokens),
                      scheme.reference_grouped_matmul(x, qweight, tokens))


@pytest.mark.parametrize("keep", [False, True])
def test_dense_large_batch_multiplies_the_operand(keep, device, monkeypatch, assert_gemm_close):
    """From DENSE_DEQUANT_ROWS tokens (DENSE_KEPT_OPERAND_ROWS with the operand kept) the dense
    op multiplies the bf16 operand, kept on the weight for the step's later calls."""
    monkeypatch.setattr(w4a16_gemm, "DENSE_DEQUANT_ROWS", 4)
    monkeypatch.setattr(w4a16_gemm, "DENSE_KEPT_OPERAND_ROWS", 2)
    scheme, qweight = _setup(1, 32, 128, 32, device)
    weight = dataclasses.replace(qweight[0], keep_operand=keep)
    x = torch.randn(3, 128, device=device).bfloat16()
    assert_gemm_close(w4a16_linear(x, weight), scheme.reference_matmul(x, weight))
    assert (weight.operand is not None) == keep
    if keep:
        assert torch.equal(weight.operand, weight.dequantize().bfloat16())


def test_bad_inputs_name_the_tensor(device):
    _, qweight = _setup(2, 16, 64, 32, device)
    with pytest.raises(ValueError, match="x: dtype torch.float32"):
        w4a16_grouped_matmul(torch.randn(3, 64, device=device), qweight, torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="x: last dim 32"):
        w4a16_linear(torch.randn(3, 32, device=device).bfloat16(), qweight[0])
    with pytest.raises(ValueError, match=r"tokens_per_expert: shape \(3,\)"):
        w4a16_grouped_matmul(torch.randn(3, 64, device=device).bfloat16(), qweight,
                             torch.tensor([1, 1, 1]))


# scales read as int32 pairs (256/128, 512/64) and as bf16 (160/32: partial K step; 384/128:
# one group per K step)
@pytest.mark.parametrize("k,group", [(256, 128), (512, 64), (160, 32), (384, 128)])
def test_operand_is_the_engine_weight_bit_for_bit(k, group, device):
    """One-hot rows of x read single weight elements back: the in-kernel unpack (pair planes,
    packed bf16 arithmetic, the split of x) must give bf16((q - 8) * scale) exactly, in the
    right column."""
    _, qweight = _setup(1, 48, k, group, device)
    eye = torch.eye(k, device=device).bfloat16()
    assert torch.equal(w4a16_linear(eye, qweight[0]), qweight[0].dequantize().bfloat16().t())


def test_dense_call_of_no_rows_is_empty(device):
    """Zero rows went to the one-token GEMV, which refused them from inside w4a16_linear."""
    qweight = get_scheme("w4a16-g32").quantize_weight(torch.randn(48, 64, device=device))
    for shape in ((0, 64), (2, 0, 64)):
        y = w4a16_linear(torch.zeros(shape, device=device, dtype=torch.bfloat16), qweight)
        assert y.shape == (*shape[:-1], 48)
