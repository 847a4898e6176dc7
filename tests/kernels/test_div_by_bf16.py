"""numerics.div_by_bf16 gives the IEEE quotient's bits, so the W4A16 quantizer divides by its
bf16 scales without the division: every pair of bf16 significands at every exponent gap a
code can see, at the smallest, a middle and the largest scale exponent the quantizer lets
through, then fp32 dividends near rounding midpoints. On the GPU the same test checks the
hardware's FMA path, under the interpreter numpy's fp32 and Triton's fp32 fma."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from megatron_qarl.quant import get_scheme
from qarl_kernels.numerics import INTERPRETED, div_by_bf16
from qarl_kernels.w4a16_quantize import w4a16_quantize


@triton.jit
def _divide_kernel(w_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr, SOFTWARE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    w = tl.load(w_ptr + offs, mask=mask, other=1.0)
    s = tl.load(s_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, div_by_bf16(w, s, tl.div_rn(1.0, s), SOFTWARE), mask=mask)


def _divide(w: np.ndarray, s: np.ndarray, device) -> np.ndarray:
    w_t, s_t = torch.from_numpy(w).to(device), torch.from_numpy(s).to(device)
    out = torch.empty_like(w_t)
    _divide_kernel[(triton.cdiv(w.size, 4096),)](w_t, s_t, out, w.size, BLOCK=4096,
                                                  SOFTWARE=INTERPRETED)
    return out.cpu().numpy()


def _bf16_significands() -> np.ndarray:
    return (1.0 + np.arange(128, dtype=np.float64) / 128).astype(np.float32)


@pytest.mark.parametrize("scale_exponent", [-96, 0, 125])
def test_every_bf16_pair_divides_as_ieee(scale_exponent, device):
    """Quotients from 2**-20 to 16 (below 2**-20 a code is 0 whatever the last bit)."""
    sig = _bf16_significands()
    gaps = np.arange(-20, 4)
    w_sig, s_sig, gap, sign = np.meshgrid(sig, sig, gaps, np.array([1, -1], np.float32),
                                          indexing="ij")
    s = np.ldexp(s_sig, scale_exponent).astype(np.float32).ravel()
    w = (sign * np.ldexp(w_sig.astype(np.float64), scale_exponent + gap)).ravel()
    keep = np.abs(w) < np.finfo(np.float32).max
    w, s = w[keep].astype(np.float32), s[keep]
    got, want = _divide(w, s, device), w / s
    bad = got.view(np.int32) != want.view(np.int32)
    assert not bad.any(), (w[bad][:4], s[bad][:4], got[bad][:4], want[bad][:4])


def test_fp32_dividends_near_midpoints_divide_as_ieee(device):
    """fp32 masters: dividends whose quotient lies a hair from a rounding midpoint of fp32 or
    from a half-integer, where a product without the correction rounds the wrong way."""
    rng = np.random.default_rng(0)
    s = np.ldexp(rng.choice(_bf16_significands(), 1 << 20), rng.integers(-30, 10, 1 << 20))
    x = rng.uniform(-7.5, 7.5, 1 << 20)
    half = np.round(x - 0.5) + 0.5
    x[: 1 << 18] = half[: 1 << 18]  # half-integers
    ulp = np.spacing(np.abs(x).astype(np.float32)).astype(np.float64)
    x[1 << 18: 1 << 19] += ulp[1 << 18: 1 << 19] * 0.5  # fp32 midpoints
    s = s.astype(np.float32)
    w = (x * s.astype(np.float64)).astype(np.float32)
    w[1 << 19:] = np.nextafter(w[1 << 19:], np.float32(np.inf) * np.sign(w[1 << 19:]))
    got, want = _divide(w, s, device), w / s
    assert np.array_equal(got.view(np.int32), want.view(np.int32))


def test_every_bf16_weight_under_every_bf16_amax_of_a_binade_gets_the_reference_code(device):
    """The quantizer end to end: each group's amax one of a binade's 128 bf16 values, its other
    127 weights every bf16 value under it (both signs) down to 1/8 (amax is in [8, 16)), so
    that every scale the binade makes divides every weight whose code is not 0."""
    amax = np.ldexp(_bf16_significands(), 3)
    weights = np.concatenate([np.ldexp(_bf16_significands(), e) for e in range(-3, 4)])
    weights = np.concatenate([weights, -weights])
    rows = []
    for a in amax:
        under = weights[np.abs(weights) <= a]
        groups = -(-under.size // 127)
        block = np.zeros((groups, 128), np.float32)
        block[:, 0] = a
        block[:, 1:].flat[: under.size] = under
        rows.append(block)
    w = torch.from_numpy(np.concatenate(rows)).to(torch.bfloat16).to(device)
    scheme = get_scheme("w4a16")
    got, want = w4a16_quantize(w, scheme), scheme.quantize_weight(w.cpu())
    assert torch.equal(got.data.cpu(), want.data)
    assert torch.equal(got.scale.cpu().view(torch.int16), want.scale.view(torch.int16))


def test_scales_outside_the_reciprocals_range_take_the_division(device):
    """Groups whose scale is under 2**-96 (fp32 and bf16 masters) still match the reference,
    ties included: the kernel divides there."""
    scheme = get_scheme("w4a16")
    for dtype in (torch.float32, torch.bfloat16):
        w = torch.zeros(4, 128)
        w[0] = (torch.arange(128) - 64) * 0.5 * 2.0 ** -110  # ties at a scale of 2**-110
        w[1] = (torch.arange(128) - 64) * 2.0 ** -126  # a subnormal scale
        w[2] = torch.randn(128) * 2.0 ** -97
        w[3] = torch.randn(128)
        w = w.to(dtype).to(device)
        got, want = w4a16_quantize(w, scheme), scheme.quantize_weight(w.cpu())
        assert torch.equal(got.data.cpu(), want.data), dtype
