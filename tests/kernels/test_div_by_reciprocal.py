"""numerics.div_by_reciprocal gives the IEEE quotient's bits, so the W4A16 and FP8 weight
quantizers divide without the division: every pair of significands at every exponent gap a code
can see, for the W4A16 scales (bf16 values) and the FP8 block scales of bf16 values (a bf16
amax times fp32(1/448)), then fp32 dividends near rounding midpoints, then the quantizers end to
end (the FP8 activations' too, which multiply by 448 x rcp(amax) instead, over the same hard
rows). On
the GPU the same tests check the hardware's FMA path; under the interpreter, numpy's fp32 and
numerics.fma_rn's FMA in float64 (the interpreter's own tl.fma rounds twice before Triton 3.9)."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.fp8_block import AMAX_EPS, INV_FP8_MAX, quantize_activation
from qarl_kernels.fp8_quantize import fp8_block_quantize, fp8_quantize_activation
from qarl_kernels.numerics import INTERPRETED, div_by_reciprocal
from qarl_kernels.w4a16_quantize import w4a16_quantize


@triton.jit
def _divide_kernel(w_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr, SOFTWARE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    w = tl.load(w_ptr + offs, mask=mask, other=1.0)
    s = tl.load(s_ptr + offs, mask=mask, other=1.0)
    q = div_by_reciprocal(w, s, tl.div_rn(1.0, s), True, SOFTWARE)
    tl.store(out_ptr + offs, q, mask=mask)


def _assert_divides_as_ieee(w: np.ndarray, s: np.ndarray, device):
    keep = np.abs(w) < np.finfo(np.float32).max
    w, s = w[keep].astype(np.float32), s[keep].astype(np.float32)
    w_t, s_t = torch.from_numpy(w).to(device), torch.from_numpy(s).to(device)
    out = torch.empty_like(w_t)
    _divide_kernel[(triton.cdiv(w.size, 4096),)](w_t, s_t, out, w.size, BLOCK=4096,
                                                  SOFTWARE=INTERPRETED)
    got, want = out.cpu().numpy(), w / s
    bad = got.view(np.int32) != want.view(np.int32)
    assert not bad.any(), (w[bad][:4], s[bad][:4], got[bad][:4], want[bad][:4])


def _bf16_significands() -> np.ndarray:
    return 1.0 + np.arange(128, dtype=np.float64) / 128


def _pairs(gaps):
    """Every bf16 dividend significand against every divisor index, at each exponent gap and
    sign, as float64 (dividend significand, divisor index, gap) grids raveled."""
    w_sig, s_idx, gap, sign = np.meshgrid(_bf16_significands(), np.arange(128), gaps,
                                          np.array([1.0, -1.0]), indexing="ij")
    return (sign * w_sig).ravel(), s_idx.ravel(), gap.ravel()


@pytest.mark.parametrize("scale_exponent", [-96, 0, 125])
def test_every_bf16_pair_divides_as_ieee(scale_exponent, device):
    """The W4A16 scales (bf16 values, 2**-96 to 2**126): quotients from 2**-20 to 16 (below
    2**-20 a code is 0 whatever the last bit), and signed zeros."""
    w_sig, s_idx, gap = _pairs(np.arange(-20, 4))
    s = np.ldexp(_bf16_significands()[s_idx], scale_exponent)
    w = np.ldexp(w_sig, scale_exponent + gap)
    _assert_divides_as_ieee(np.concatenate([w, [0.0, -0.0]]), np.concatenate([s, [s[0]] * 2]),
                            device)


@pytest.mark.parametrize("amax_exponent", [-33, 0, 127])
def test_every_bf16_value_over_every_fp8_scale_divides_as_ieee(amax_exponent, device):
    """The FP8 block scales of bf16 values: fp32(amax * fp32(1/448)) for every bf16 amax
    significand, from just over the 1e-10 floor to the top of the range, over every bf16
    value down to a quotient of 2**-20 (e4m3's smallest step is 2**-9), and signed zeros."""
    w_sig, s_idx, gap = _pairs(np.arange(-28, 1))
    amax = np.ldexp(_bf16_significands(), amax_exponent).astype(np.float32)
    s = (amax * np.float32(INV_FP8_MAX))[s_idx].astype(np.float64)
    w = np.ldexp(w_sig, amax_exponent + gap)
    _assert_divides_as_ieee(np.concatenate([w, [0.0, -0.0]]), np.concatenate([s, [s[0]] * 2]),
                            device)


def test_every_bf16_value_under_the_fp8_floor_divides_as_ieee(device):
    """Blocks whose amax is under 1e-10 take the scale fp32(fp32(1e-10) / 448), a 24-bit
    significand: every bf16 value under the floor down to a quotient of 2**-20."""
    s = np.float32(np.float32(AMAX_EPS) * np.float32(INV_FP8_MAX))
    w = np.concatenate([np.ldexp(_bf16_significands(), e) for e in range(-54, -33)])
    w = np.concatenate([w, -w]).astype(np.float32)
    w = w[np.abs(w) < AMAX_EPS]
    _assert_divides_as_ieee(w.astype(np.float64), np.full(w.size, s, np.float64), device)


def test_fp32_dividends_near_midpoints_divide_as_ieee(device):
    """fp32 masters over bf16 scales: quotients at half-integers, a hair from fp32 rounding
    midpoints, and an ulp off those, where a product without the correction rounds the wrong
    way."""
    rng = np.random.default_rng(0)
    n = 1 << 20
    s = np.ldexp(rng.choice(_bf16_significands(), n), rng.integers(-30, 10, n))
    x = rng.uniform(-7.5, 7.5, n)
    x[: n // 4] = np.round(x[: n // 4] - 0.5) + 0.5
    x[n // 4: n // 2] += np.spacing(np.abs(x[n // 4: n // 2]).astype(np.float32)) * 0.5
    w = (x * s).astype(np.float32)
    w[n // 2:] = np.nextafter(w[n // 2:], np.float32(np.inf) * np.sign(w[n // 2:]))
    _assert_divides_as_ieee(w.astype(np.float64), s, device)


def test_every_bf16_weight_under_every_bf16_amax_of_a_binade_gets_the_reference_code(device):
    """The W4A16 quantizer end to end: each group's amax one of a binade's 128 bf16 values, its
    other 127 weights every bf16 value under it (both signs) down to 1/8 (amax is in [8, 16)),
    so that every scale the binade makes divides every weight whose code is not 0."""
    amax = np.ldexp(_bf16_significands(), 3)
    weights = np.concatenate([np.ldexp(_bf16_significands(), e) for e in range(-3, 4)])
    weights = np.concatenate([weights, -weights])
    rows = []
    for a in amax:
        under = weights[np.abs(weights) <= a]
        block = np.zeros((-(-under.size // 127), 128))
        block[:, 0] = a
        block[:, 1:].flat[: under.size] = under
        rows.append(block)
    w = torch.from_numpy(np.concatenate(rows)).to(torch.bfloat16).to(device)
    scheme = get_scheme("w4a16")
    got, want = w4a16_quantize(w, scheme), scheme.quantize_weight(w.cpu())
    assert torch.equal(got.data.cpu(), want.data)
    assert torch.equal(got.scale.cpu().view(torch.int16), want.scale.view(torch.int16))


def test_scales_outside_the_reciprocals_range_take_the_division(device):
    """W4A16 groups whose scale is under 2**-96 (fp32 and bf16 masters) still match the
    reference, ties included: the kernel divides there."""
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


def _under_amax(a: float, width: int) -> np.ndarray:
    """Rows of `width`, each a then bf16 values under it: every one down to a / 2**20 (both
    signs) and signed zeros, the hard cases of an FP8 block or token block whose amax is a."""
    weights = np.concatenate([np.ldexp(_bf16_significands(), e) for e in range(-20, 0)])
    vals = np.concatenate([weights[weights <= a], -weights[weights <= a], [0.0, -0.0]])
    rows = np.zeros((-(-vals.size // (width - 1)), width))
    rows[:, 0] = a
    rows[:, 1:].flat[: vals.size] = vals
    return rows


def test_fp8_activations_of_bf16_values_get_the_reference_codes(device):
    """Token rows: each amax of a binade over the values under it, then rows under the 1e-10
    floor, an all-zero row and a row with an inf (its multiplier 0; codes of inf unspecified):
    every significand of the reciprocal's table and the instruction on the GPU."""
    rows = [_under_amax(a, 128) for a in _bf16_significands()]
    rows += [np.ldexp(np.linspace(-1, 1, 128), -40)[None], np.zeros((1, 128)),
             np.full((1, 128), np.inf)]
    x = torch.from_numpy(np.concatenate(rows)).to(torch.bfloat16).to(device)
    q, scale = fp8_quantize_activation(x)
    want_q, want_scale = quantize_activation(x.cpu())
    assert torch.equal(q.cpu().view(torch.uint8)[:-1], want_q.view(torch.uint8)[:-1])
    assert torch.equal(scale.cpu(), want_scale)


def test_fp8_weight_blocks_of_bf16_values_get_the_reference_codes(device):
    """One 128 x 128 block per amax, every 16th of a binade (the pairs above try them all),
    holding every bf16 value under it: the kernel's path to the division."""
    amaxes = _bf16_significands()[::16]
    blocks = np.zeros((amaxes.size, 128, 128))
    for b, a in enumerate(amaxes):
        hard = _under_amax(a, 128)
        blocks[b, : hard.shape[0]] = hard
    w = torch.from_numpy(blocks.reshape(-1, 128)).to(torch.bfloat16).to(device)
    scheme = get_scheme("fp8-block")
    got, want = fp8_block_quantize(w, scheme), scheme.quantize_weight(w.cpu())
    assert torch.equal(got.data.cpu().view(torch.uint8), want.data.view(torch.uint8))
    assert torch.equal(got.scale.cpu(), want.scale)
