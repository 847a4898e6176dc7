"""The FP8 activation codes take sgl-kernel SM90's arithmetic: x * fp32(448 * rcp(amax)) with
the GPU's approximate reciprocal (quant/hopper_reciprocal.py). The table itself is checked
against the hardware by tests/kernels/test_sgl_kernel_fp8_codes.py on a GPU."""
import torch

from megatron_qarl.quant.fp8_block import (AMAX_EPS, FP8_DTYPE, FP8_MAX, INV_FP8_MAX,
                                           quantize_activation)
from megatron_qarl.quant.hopper_reciprocal import hopper_reciprocal, significand_table

CPU = torch.device("cpu")
SIGNIFICANDS = 1 + torch.arange(128) / 128


def _bits(t):
    return t.view(torch.int32)


def _bf16_values(exponents):
    """Every positive bf16 value 1.k * 2**e for e in exponents, as fp32 [len(exponents), 128]."""
    e = torch.tensor(exponents, dtype=torch.int32)[:, None] + 127
    return ((e << 23) | (torch.arange(128, dtype=torch.int32) << 16)).view(torch.float32)


def test_table_is_the_reciprocal_within_one_ulp():
    """As measured (H200): 20 of the 128 significands one ulp off the correctly rounded 1/s."""
    ulps = _bits(significand_table(CPU)) - _bits(1.0 / SIGNIFICANDS)
    assert ulps.abs().max() == 1 and int((ulps != 0).sum()) == 20
    assert significand_table(CPU)[0] == 1.0


def test_bf16_amaxes_take_the_table_scaled_by_their_exponent():
    values = _bf16_values(range(-126, 126))
    rcp = hopper_reciprocal(values)
    assert torch.equal(rcp[126], significand_table(CPU))  # exponent 0
    assert torch.equal(rcp[:-1], rcp[1:] * 2)  # exact: every result is normal
    assert (rcp * values - 1).abs().max() < 2 ** -22


def test_results_under_the_normal_range_flush_to_zero():
    """rcp.approx.ftz: amaxes from 2**126 up have subnormal reciprocals, flushed (but 2**126)."""
    top = _bf16_values([126, 127])
    rcp = hopper_reciprocal(top)
    assert rcp[0, 0] == 2.0 ** -126 and not rcp.flatten()[1:].any()


def test_other_amaxes_take_the_correctly_rounded_reciprocal():
    """fp32 amaxes (fp32 activations) off the table; the 1e-10 floor (not a bf16 value) too,
    whose correctly rounded reciprocal is the GPU's (1e10, measured)."""
    torch.manual_seed(0)
    amax = torch.rand(1000) * 100 + 1e-3
    amax = amax[_bits(amax) & 0xFFFF != 0]
    assert torch.equal(hopper_reciprocal(amax), 1.0 / amax)
    assert hopper_reciprocal(torch.tensor([AMAX_EPS])).item() == 1e10


def test_codes_are_sglangs_where_the_reciprocal_is_approximate():
    """amax = 1.296875 (significand 38: the GPU's reciprocal 0x3f4565c9, one ulp over the
    correctly rounded 0x3f4565c8), every bf16 value under it of both signs: the codes are
    e4m3(x * fp32(448 * 0x3f4565c9)), which the division by the scale and the correctly
    rounded reciprocal both miss in 32 codes each."""
    amax = 1.296875
    values = _bf16_values(range(-126, 1)).flatten()
    values = values[values <= amax]
    rows = torch.cat([values, -values])
    rows = torch.nn.functional.pad(rows, (0, -rows.numel() % 127)).view(-1, 127)
    x = torch.cat([torch.full((rows.shape[0], 1), amax), rows], 1).bfloat16()
    q, scale = quantize_activation(x)
    assert torch.equal(scale, torch.full_like(scale, amax) * INV_FP8_MAX)

    def codes(multiplier):
        return (x.float() * multiplier).clamp(-FP8_MAX, FP8_MAX).to(FP8_DTYPE).view(torch.uint8)

    gpu_rcp = torch.tensor(0x3f4565c9, dtype=torch.int32).view(torch.float32)
    assert torch.equal(q.view(torch.uint8), codes(FP8_MAX * gpu_rcp))
    division = (x.float() / scale).clamp(-FP8_MAX, FP8_MAX).to(FP8_DTYPE).view(torch.uint8)
    assert int((q.view(torch.uint8) != division).sum()) == 32
    assert int((q.view(torch.uint8) != codes(FP8_MAX * (1.0 / torch.tensor(amax)))).sum()) == 32
