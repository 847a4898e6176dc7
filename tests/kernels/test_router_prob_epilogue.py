"""fc2 of the experts multiplies each row's router prob into its fp32 accumulator before the
output's one rounding, as SGLang's fused MoE does (quant.base.scale_rows), in every grouped
kernel: Triton (W4A16, its K split too, FP8, INT8) under the interpreter or on the GPU, the
Hopper kernels (W4A16 Gluon and warp-specialized, FP8 warp-specialized) on an SM90 GPU.

A power-of-two prob scales a float exactly, so with such probs each row must be its unscaled
output times its prob, bit for bit: the prob reached the row it belongs to, and nothing else
moved. Random probs are checked against the reference."""
import pytest
import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import fp8_grouped_ws, w4a16_grouped_ws
from qarl_kernels.fp8_gemm import fp8_block_grouped_linear
from qarl_kernels.fp8_quantize import fp8_quantize_activation
from qarl_kernels.grouped_mm import bf16_grouped_linear
from qarl_kernels.int8_gemm import int8_grouped_linear
from qarl_kernels.w4a16_gemm import W4A16Config, w4a16_grouped_matmul
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon

HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
COUNTS = [5, 0, 9, 1]


def _w4a16(config):
    return lambda x, q, counts, probs=None: w4a16_grouped_matmul(x, q, counts, config,
                                                                 probs=probs)


# (scheme, grouped op with probs=..., whether it matches the reference bit for bit)
OPS = {
    "w4a16 16x16": ("w4a16-g32", _w4a16(W4A16Config(16, 16)), False),
    "w4a16 32x32 k128": ("w4a16-g32", _w4a16(W4A16Config(32, 32, block_k=128)), False),
    "w4a16 K split": ("w4a16-g32", _w4a16(W4A16Config(16, 16, split_k=2)), False),
    "fp8 triton": ("fp8-block", fp8_block_grouped_linear, False),
    "int8": ("int8", int8_grouped_linear, True),
}


def _case(scheme_name, device, rows=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    scheme = get_scheme(scheme_name)
    qweight = scheme.quantize_weight(
        (0.1 * torch.randn(len(COUNTS), 256, 256, generator=g)).to(device))
    rows = rows or sum(COUNTS)
    x = torch.randn(rows, 256, generator=g).bfloat16().to(device)
    powers = 2.0 ** torch.randint(-3, 2, (rows,), generator=g).float()
    return scheme, qweight, torch.tensor(COUNTS), x, powers.to(device)


@pytest.mark.parametrize("name", sorted(OPS))
def test_power_of_two_probs_scale_each_row_exactly(name, device):
    scheme_name, op, _ = OPS[name]
    _, qweight, counts, x, powers = _case(scheme_name, device)
    plain = op(x, qweight, counts)
    assert torch.equal(op(x, qweight, counts, probs=powers),
                       (plain.float() * powers[:, None]).bfloat16())


@pytest.mark.parametrize("name", sorted(OPS))
def test_probs_match_the_reference(name, device, assert_gemm_close):
    scheme_name, op, exact = OPS[name]
    scheme, qweight, counts, x, _ = _case(scheme_name, device, seed=1)
    probs = torch.rand(x.shape[0], device=device)
    got = op(x, qweight, counts, probs=probs)
    want = scheme.reference_grouped_matmul(x, qweight, counts, probs)
    if exact:
        assert torch.equal(got, want)
    else:
        assert_gemm_close(got, want)


@pytest.mark.parametrize("name", sorted(OPS))
def test_padding_rows_past_the_counts_take_probs_too(name, device):
    """A fixed-size exchange pads x past the counts: the probs cover every row of x."""
    scheme_name, op, _ = OPS[name]
    _, qweight, counts, x, powers = _case(scheme_name, device, rows=sum(COUNTS) + 7)
    routed = sum(COUNTS)
    got = op(x, qweight, counts, probs=powers)[:routed]
    want = (op(x, qweight, counts)[:routed].float() * powers[:routed, None]).bfloat16()
    assert torch.equal(got, want)
    with pytest.raises(ValueError, match="probs: shape"):
        op(x, qweight, counts, probs=powers[:routed])


def test_bf16_grouped_rounds_before_the_prob(device):
    """torch._grouped_mm writes bf16 only: the bf16 experts (and W4A16's kept-operand path)
    round, scale, and round again, one bf16 step off the single rounding at most."""
    scheme, qweight, counts, x, _ = _case("none", device)
    probs = torch.rand(x.shape[0], device=device)
    got = bf16_grouped_linear(x, qweight, counts, probs=probs)
    raw = bf16_grouped_linear(x, qweight, counts)
    assert torch.equal(got, (raw.float() * probs[:, None]).bfloat16())
    want = scheme.reference_grouped_matmul(x, qweight, counts, probs).float()
    assert ((got.float() - want).abs() <= 2**-7 * want.abs() + 1e-6).all()


HOPPER_OPS = {
    "w4a16 gluon": lambda x, q, counts, probs=None: w4a16_grouped_gluon(
        x, q, counts.to(x.device, torch.int32), 16, 64, 3, probs=probs),
    "w4a16 gluon K split": lambda x, q, counts, probs=None: w4a16_grouped_gluon(
        x, q, counts.to(x.device, torch.int32), 16, 64, 2, probs=probs, split_k=2),
    "w4a16 ws": lambda x, q, counts, probs=None: w4a16_grouped_ws.w4a16_grouped_ws(
        x, q, counts.to(x.device, torch.int32), probs=probs),
    "fp8 ws": lambda x, q, counts, probs=None: fp8_grouped_ws.fp8_grouped_ws(
        *fp8_quantize_activation(x), q, counts.to(x.device, torch.int32), probs=probs),
}


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("name", sorted(HOPPER_OPS))
def test_hopper_kernels_scale_each_row(name, assert_gemm_close):
    op = HOPPER_OPS[name]
    scheme_name = "fp8-block" if name.startswith("fp8") else "w4a16"
    device = torch.device("cuda")
    scheme, qweight, counts, x, powers = _case(scheme_name, device, rows=sum(COUNTS) + 7)
    routed = sum(COUNTS)
    plain = op(x, qweight, counts)[:routed]
    got = op(x, qweight, counts, probs=powers)[:routed]
    assert torch.equal(got, (plain.float() * powers[:routed, None]).bfloat16())
    probs = torch.rand(x.shape[0], device=device)
    assert_gemm_close(op(x, qweight, counts, probs=probs)[:routed],
                      scheme.reference_grouped_matmul(x, qweight, counts, probs)[:routed])
