"""fc2 of the experts multiplies each row by its router prob in every grouped kernel as the
scheme's spec says (quant.base.scale_rows): Triton (W4A16, its K split too, FP8, INT8) under the
interpreter or on the GPU, the Hopper kernels (W4A16 Gluon and warp-specialized, FP8
warp-specialized) on an SM90 GPU, and torch._grouped_mm's bf16 experts.

FP8 and INT8 multiply the prob into the fp32 accumulator before the one rounding, as SGLang's
Triton fused MoE does (MUL_ROUTED_WEIGHT); W4A16 rounds the output first and multiplies it by
the prob rounded to bf16, a product rounded again, as its Marlin MoE does (write_result's
`__hmul2`). On inputs whose sums are exact (integer codes, scales of 1) the reference's
accumulator is the kernel's, so the spec's form must be matched bit for bit, and the other
form must not be."""
import pytest
import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import fp8_grouped_ws, w4a16_grouped_ws
from qarl_kernels.fp8_gemm import fp8_block_grouped_linear
from qarl_kernels.fp8_quantize import fp8_quantize_activation
from qarl_kernels.grouped_mm import bf16_grouped_linear
from qarl_kernels.int8_gemm import int8_grouped_linear
from qarl_kernels.w4a16_gemm import W4A16Config, w4a16_grouped_linear, w4a16_grouped_matmul
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon

HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
COUNTS = [5, 0, 9, 1]
PADDING = 7  # rows past the counts, as a fixed-size exchange leaves them


def _w4a16(config):
    return lambda x, q, counts, probs=None: w4a16_grouped_matmul(x, q, counts, config,
                                                                 probs=probs)


# (scheme, grouped op with probs=...)
OPS = {
    "w4a16 16x16": ("w4a16-g32", _w4a16(W4A16Config(16, 16))),
    "w4a16 32x32 k128": ("w4a16-g32", _w4a16(W4A16Config(32, 32, block_k=128))),
    "w4a16 K split": ("w4a16-g32", _w4a16(W4A16Config(16, 16, split_k=2))),
    "w4a16 op": ("w4a16-g32", w4a16_grouped_linear),
    "fp8 triton": ("fp8-block", fp8_block_grouped_linear),
    "int8": ("int8", int8_grouped_linear),
}
#: every weight block's amax, which makes its scale 1.0 (7 * fp32(1/7) and 448 * fp32(1/448)
#: round to 1)
AMAX = {"w4a16-g32": 7.0, "w4a16": 7.0, "fp8-block": 448.0, "int8": 127.0}


def _case(scheme_name, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    scheme = get_scheme(scheme_name)
    qweight = scheme.quantize_weight(
        (0.1 * torch.randn(len(COUNTS), 256, 256, generator=g)).to(device))
    x = torch.randn(sum(COUNTS) + PADDING, 256, generator=g).bfloat16().to(device)
    probs = torch.rand(x.shape[0], generator=g).to(device)
    return scheme, qweight, torch.tensor(COUNTS), x, probs


def _exact_case(scheme_name, device, seed=0):
    """Integer weights and activations with every block's amax at AMAX, so every scale is 1.0
    and the GEMM's sums are integers, exact in fp32 in any order."""
    g = torch.Generator().manual_seed(seed)
    scheme = get_scheme(scheme_name)
    w = torch.randint(-4, 5, (len(COUNTS), 256, 256), generator=g).float()
    w[..., ::32] = AMAX[scheme_name]
    x = torch.randint(-4, 5, (sum(COUNTS) + PADDING, 256), generator=g).float()
    x[:, 1::128] = 4.0 if scheme_name.startswith("w4a16") else AMAX[scheme_name]
    probs = torch.rand(x.shape[0], generator=g)
    return (scheme, scheme.quantize_weight(w.to(device)), torch.tensor(COUNTS),
            x.bfloat16().to(device), probs.to(device))


def _exact_sums(x, qweight, counts):
    """Each routed row's fp32 sums with its expert's weight: integers, exact."""
    w = qweight.dequantize().double()
    parts = torch.split(x[:sum(COUNTS)].double(), COUNTS)
    return torch.cat([part @ w[e].T for e, part in enumerate(parts)]).float()


def _spec_form_matched(op, scheme, qweight, counts, x, probs):
    routed = sum(COUNTS)
    got = op(x, qweight, counts, probs=probs)[:routed]
    assert torch.equal(got, scheme.reference_grouped_matmul(x, qweight, counts, probs)[:routed])
    acc = _exact_sums(x, qweight, counts)
    once = (acc * probs[:routed, None]).bfloat16()  # Triton's MoE
    marlin = acc.bfloat16() * probs[:routed, None].bfloat16()  # bf16 product of the rounded
    assert torch.equal(got, marlin if scheme.prob_after_rounding else once)
    assert not torch.equal(once, marlin)


@pytest.mark.parametrize("name", sorted(OPS))
def test_the_prob_takes_the_schemes_order(name, device):
    scheme_name, op = OPS[name]
    _spec_form_matched(op, *_exact_case(scheme_name, device))


@pytest.mark.parametrize("name", sorted(OPS))
def test_probs_match_the_reference_and_cover_every_row(name, device, assert_gemm_close):
    scheme_name, op = OPS[name]
    scheme, qweight, counts, x, probs = _case(scheme_name, device, seed=1)
    routed = sum(COUNTS)
    got, spec_probs = op(x, qweight, counts, probs=probs)[:routed], probs
    if scheme.prob_after_rounding:  # a bf16 product of the output, whatever its sums' order
        plain = op(x, qweight, counts)[:routed]
        assert torch.equal(got, plain * probs[:routed, None].bfloat16())
        got, spec_probs = plain, None
    assert_gemm_close(got, scheme.reference_grouped_matmul(x, qweight, counts,
                                                           spec_probs)[:routed])
    with pytest.raises(ValueError, match="probs: shape"):
        op(x, qweight, counts, probs=probs[:routed])


def test_bf16_grouped_mm_takes_the_prob_after_rounding(device):
    scheme, qweight, counts, x, probs = _case("none", device)
    assert scheme.prob_after_rounding
    routed = sum(COUNTS)
    got = bf16_grouped_linear(x, qweight, counts, probs=probs)[:routed]
    plain = bf16_grouped_linear(x, qweight, counts)[:routed]
    assert torch.equal(got, plain * probs[:routed, None].bfloat16())
    want = scheme.reference_grouped_matmul(x, qweight, counts, probs)[:routed].float()
    assert ((got.float() - want).abs() <= 2**-7 * want.abs() + 1e-6).all()


def _hopper_op(name):
    def op(x, q, counts, probs=None):
        counts = counts.to(x.device, torch.int32)
        if name == "w4a16 gluon":
            return w4a16_grouped_gluon(x, q, counts, 16, 64, 3, probs=probs)
        if name == "w4a16 gluon K split":
            return w4a16_grouped_gluon(x, q, counts, 16, 64, 2, probs=probs, split_k=2)
        if name == "w4a16 ws":
            return w4a16_grouped_ws.w4a16_grouped_ws(x, q, counts, probs=probs)
        return fp8_grouped_ws.fp8_grouped_ws(*fp8_quantize_activation(x), q, counts,
                                             probs=probs)
    return op


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("name", ["w4a16 gluon", "w4a16 gluon K split", "w4a16 ws"])
def test_hopper_w4a16_kernels_take_marlins_order(name):
    # the Hopper kernels take 128-input groups
    _spec_form_matched(_hopper_op(name), *_exact_case("w4a16", torch.device("cuda")))


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
def test_hopper_fp8_kernel_scales_each_row(assert_gemm_close):
    """FP8 wgmmas do not add exactly (reduced-precision accumulation, session 69 call 5), so
    power-of-two probs, which scale a float exactly, check the rows, and the reference the
    rest."""
    op = _hopper_op("fp8 ws")
    scheme, qweight, counts, x, probs = _case("fp8-block", torch.device("cuda"))
    routed = sum(COUNTS)
    powers = 2.0 ** torch.randint(-3, 2, probs.shape, device=probs.device).float()
    plain = op(x, qweight, counts)[:routed]
    assert torch.equal(op(x, qweight, counts, probs=powers)[:routed],
                       (plain.float() * powers[:routed, None]).bfloat16())
    assert_gemm_close(op(x, qweight, counts, probs=probs)[:routed],
                      scheme.reference_grouped_matmul(x, qweight, counts, probs)[:routed])
