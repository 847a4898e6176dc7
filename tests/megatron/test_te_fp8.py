"""The TransformerEngine FP8 path, as far as it runs without TE: our tensors in TE's GEMM-ready
layout (checked by evaluating the blockwise GEMM on that layout), why TE's own quantizer is not
used, and the backend precedence. The TE GEMM calls themselves cannot run here (no TE)."""
import importlib.util
import logging

import pytest
import torch

from megatron_qarl.layers.cuda_ops import (
    REFERENCE, TE, TRITON, announce_fp8_backend, fp8_backend,
)
from megatron_qarl.layers.te_fp8 import te_applies, te_fp8_unavailable_reason
from megatron_qarl.layers.te_layout import (
    activation_scale_inv_for_te, padded_group_rows, scatter_rows, weight_scale_inv_for_te,
)
from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.fp8_block import FP8_DTYPE, FP8_MAX, quantize_activation

SCHEME = get_scheme("fp8-block")


def test_weight_scales_padded_to_four_blocks_like_te():
    qw = SCHEME.quantize_weight(torch.randn(2, 256, 640), "experts")  # 5 K-blocks
    te = weight_scale_inv_for_te(qw.scale)
    assert te.shape == (2, 2, 8) and te.is_contiguous()
    assert torch.equal(te[..., :5], qw.scale) and not te[..., 5:].any()
    assert weight_scale_inv_for_te(qw.scale[0, :, :4]).shape == (2, 4)  # already a multiple
    assert te_applies(qw) and not te_applies(SCHEME.quantize_weight(torch.randn(256, 200)))


def test_activation_rows_padded_per_expert_and_scales_transposed():
    x = torch.randn(11, 384)
    counts = [3, 0, 8]
    padded, index = padded_group_rows(counts)
    assert padded == [8, 0, 8]
    assert index.tolist() == [0, 1, 2] + list(range(8, 16))
    q, s = quantize_activation(x)
    q_te = scatter_rows(q, index, sum(padded))
    s_te = activation_scale_inv_for_te(scatter_rows(s, index, sum(padded)))
    assert q_te.dtype == torch.uint8 and torch.equal(q_te[index], q.view(torch.uint8))
    assert not q_te[3:8].any()  # padding rows are fp8 zeros
    assert s_te.shape == (3, 16) and s_te.is_contiguous()
    assert torch.equal(s_te[:, index], s.t())
    with pytest.raises(ValueError, match="multiple of 4"):
        activation_scale_inv_for_te(s)  # 11 rows: not padded


def _blockwise_gemm_on_te_layout(a_u8, a_scale_inv, w_u8, w_scale_inv):
    """What the 1x128 x 128x128 blockwise GEMM computes from TE's GEMM-ready operands:
    y[m, n] = sum_kb (a[m, block kb] . w[n, block kb]) * a_scale_inv[kb, m]
    * w_scale_inv[n // 128, kb]."""
    a = a_u8.view(FP8_DTYPE).double()
    w = w_u8.view(FP8_DTYPE).double()
    kb = a.shape[1] // 128
    partial = torch.einsum("mbk,nbk->mnb", a.reshape(a.shape[0], kb, 128),
                           w.reshape(w.shape[0], kb, 128))
    w_scale = w_scale_inv[:, :kb].repeat_interleave(128, 0)  # [n, kb]
    return (partial * a_scale_inv[:kb].t().double()[:, None, :] * w_scale[None]).sum(-1)


def test_te_layout_reproduces_the_reference_grouped_gemm():
    torch.manual_seed(0)
    qw = SCHEME.quantize_weight(torch.randn(3, 256, 384) * 0.05, "experts")
    counts = [5, 0, 9]
    x = torch.randn(sum(counts), 384)
    padded, index = padded_group_rows(counts)
    q, s = quantize_activation(x)
    q_te = scatter_rows(q, index, sum(padded))
    s_te = scatter_rows(s, index, sum(padded))
    w_scales = weight_scale_inv_for_te(qw.scale)
    out, start = [], 0
    for e, rows in enumerate(padded):
        seg = slice(start, start + rows)
        out.append(_blockwise_gemm_on_te_layout(
            q_te[seg], activation_scale_inv_for_te(s_te[seg]),
            qw.data[e].view(torch.uint8), w_scales[e]))
        start += rows
    y = torch.cat(out)
    assert not y[5:8].any()  # padded rows give zeros and are dropped
    want = SCHEME.reference_grouped_matmul(x, qw, torch.tensor(counts))
    torch.testing.assert_close(y[index].float(), want, rtol=1e-5, atol=1e-5)


def test_te_quantizer_rounding_is_not_ours():
    """TE: scale = 448/amax, codes = fp8(x*scale), scale_inv = 1/scale. Our spec:
    scale_inv = amax * fp32(1/448), codes = fp8(x * fp32(448 * rcp(amax))), rcp Hopper's
    approximate reciprocal (its table's for the bf16-valued amaxes among these, the correctly
    rounded one for the rest). Inputs at
    midpoints between e4m3 values expose the difference, which is why te_fp8.py wraps our
    tensors instead."""
    grid = torch.arange(0, 127, dtype=torch.uint8).view(FP8_DTYPE).float()  # 0 .. 448
    midpoints = (grid[1:] + grid[:-1]) / 2
    rows = [torch.cat([amax.view(1), midpoints * (amax / FP8_MAX)])
            for amax in torch.linspace(1.0, 7.0, 61)]
    x = torch.nn.functional.pad(torch.stack(rows), (0, 1))  # 128 inputs per row
    q, s = quantize_activation(x)
    te_scale = torch.tensor(FP8_MAX) / x.abs().amax(-1, keepdim=True)
    te_codes = (x * te_scale).clamp(-FP8_MAX, FP8_MAX).to(FP8_DTYPE)
    assert (1 / te_scale != s).any()
    assert (te_codes.float() != q.float()).any()


@pytest.mark.parametrize("te_reason, triton, want", [
    (None, True, TE), (None, False, TE), ("no CUDA device", True, TRITON),
    ("no CUDA device", False, REFERENCE),
])
def test_fp8_backend_precedence(te_reason, triton, want):
    assert fp8_backend(te_reason, triton) == want


def test_fp8_backend_is_logged_once(caplog):
    announce_fp8_backend.cache_clear()
    with caplog.at_level(logging.INFO, logger="megatron_qarl.layers.cuda_ops"):
        for _ in range(3):
            announce_fp8_backend(TRITON, "transformer_engine is not installed")
    assert len(caplog.records) == 1
    assert "triton (TransformerEngine not used: transformer_engine is not installed)" in \
        caplog.records[0].getMessage()


@pytest.mark.skipif(importlib.util.find_spec("transformer_engine") is not None,
                    reason="TransformerEngine is installed here")
def test_without_te_the_reason_names_it():
    assert te_fp8_unavailable_reason() == "transformer_engine is not installed"
