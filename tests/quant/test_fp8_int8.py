"""FP8 block and INT8 W8A8: scale shapes, grouping, error bounds, reference GEMMs."""
import math

import numpy as np
import pytest
import torch

from megatron_qarl.quant import FP8Block, Int8W8A8
from megatron_qarl.quant.fp8_block import FP8_MAX, quantize_activation
from megatron_qarl.quant import int8 as int8_mod


@pytest.mark.parametrize("shape", [(128, 128), (300, 200), (129, 1), (5, 640), (2, 130, 260)])
def test_fp8_ragged_scale_shapes_and_error_bound(shape):
    w = torch.randn(shape) * 0.05
    qw = FP8Block().quantize_weight(w, "w")
    assert qw.data.dtype == torch.float8_e4m3fn
    assert qw.scale.shape == (*shape[:-2], math.ceil(shape[-2] / 128), math.ceil(shape[-1] / 128))
    # e4m3 has 3 mantissa bits: relative error <= 2^-4 of the block's scale * 448 range
    s = FP8Block().dequantize(qw)
    err = (s - w).abs()
    block_amax = qw.scale.repeat_interleave(128, -2).repeat_interleave(128, -1)
    block_amax = block_amax[..., : shape[-2], : shape[-1]] * FP8_MAX
    assert (err <= block_amax * 2**-4 + 1e-12).all()
    assert (err <= w.abs() * 2**-4 + block_amax * 2**-9).all()


def test_fp8_block_scale_is_block_absmax():
    w = torch.zeros(256, 256)
    w[0, 0], w[200, 10], w[5, 250] = 3.0, -448.0, 0.5
    qw = FP8Block().quantize_weight(w, "w")
    assert torch.allclose(qw.scale, torch.tensor([[3.0, 0.5], [448.0, 1e-10]]) / 448)


def test_fp8_activation_groups_are_per_token_per_128_inputs():
    x = torch.randn(3, 384)
    x[1, 130] = 100.0  # only token 1, group 1 changes scale
    q, s = quantize_activation(x)
    assert s.shape == (3, 3)
    ref = x.reshape(3, 3, 128).abs().amax(-1) * (1 / FP8_MAX)
    assert torch.equal(s, ref)
    assert s[1, 1] == torch.tensor(100.0) * (1 / FP8_MAX) and s[0, 1] < 1.0
    deq = q.float() * s.repeat_interleave(128, -1)
    assert ((deq - x).abs() <= x.abs() * 2**-4 + s.repeat_interleave(128, -1) * 2**-9).all()


def test_fp8_reference_matmul_is_blockwise_scaled_product():
    torch.manual_seed(0)
    x, w = torch.randn(4, 256, dtype=torch.bfloat16), torch.randn(256, 256) * 0.1
    scheme = FP8Block()
    qw = scheme.quantize_weight(w)
    xq, xs = quantize_activation(x)
    # the block GEMM: sum over K-blocks of (fp8 dot) * act scale * weight scale
    expected = torch.zeros(4, 256, dtype=torch.float64)
    for kb in range(2):
        ks = slice(kb * 128, (kb + 1) * 128)
        dot = xq[:, ks].double() @ qw.data[:, ks].double().t()
        expected += dot * xs[:, kb : kb + 1].double() * qw.scale[:, kb].double().repeat_interleave(128)[None]
    y = scheme.reference_matmul(x, qw)
    assert y.dtype == torch.bfloat16
    assert torch.allclose(y.double(), expected, rtol=1e-2, atol=1e-2)


def test_int8_per_channel_weights_per_token_activations_exact_accumulation():
    torch.manual_seed(0)
    scheme = Int8W8A8()
    w, x = torch.randn(16, 4096), torch.randn(3, 4096)
    qw = scheme.quantize_weight(w, "w")
    assert qw.data.dtype == torch.int8 and qw.scale.shape == (16, 1)
    assert torch.equal(qw.data.abs().amax(-1), torch.full((16,), 127, dtype=torch.int8))
    xq, xs = int8_mod.quantize_activation(x)
    assert xs.shape == (3, 1)
    exact = sum(int(a) * int(b) for a, b in zip(xq[1].tolist(), qw.data[2].tolist()))
    y = scheme.reference_matmul(x.double(), qw)
    # the exact sum rounded to fp32 once, then (sum * x_scale) * w_scale in fp32
    f32 = np.float32
    want = f32(f32(exact) * f32(xs[1, 0].item())) * f32(qw.scale[2, 0].item())
    assert y[1, 2].item() == float(want)
    assert torch.allclose(y.float(), x @ w.t(), rtol=0.05, atol=0.5)


def test_fp8_all_zero_block_gets_the_floor_scale_and_dequantizes_to_zero():
    from megatron_qarl.quant.fp8_block import AMAX_EPS

    w = torch.zeros(256, 256)
    w[0, 0] = 1.0
    qw = FP8Block().quantize_weight(w)
    assert torch.equal(qw.scale[1, 1], torch.tensor(AMAX_EPS) * (1.0 / FP8_MAX))
    assert torch.equal(qw.dequantize(), w)


def test_int8_scale_is_the_row_absmax_over_127():
    w = torch.randn(4096, 64, generator=torch.Generator().manual_seed(0))
    scale = Int8W8A8().quantize_weight(w).scale
    assert torch.equal(scale, w.abs().amax(-1, keepdim=True) / torch.tensor(127.0))


def test_int8_rounds_ties_away_from_zero():
    """As SGLang's int8 quantizers (round(), not rint()): amax 127 makes the scale 1."""
    x = torch.tensor([[127.0, 2.5, -2.5, 0.5, -0.5, 1.5]])
    codes = [[127, 3, -3, 1, -1, 2]]
    assert int8_mod.quantize_activation(x)[0].tolist() == codes
    assert Int8W8A8().quantize_weight(x).data.tolist() == codes
