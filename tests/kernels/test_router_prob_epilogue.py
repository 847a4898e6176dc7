"""fc2 of the experts multiplies each row by its router prob as the SGLang kernel serving the
scheme does (quant.base.scale_rows), in every grouped kernel: Triton (W4A16, its K split too,
FP8, INT8) under the interpreter or on the GPU, the Hopper kernels (W4A16 Gluon and
warp-specialized, FP8 warp-specialized) on an SM90 GPU.

W4A16 (Marlin's order): the rounded output times the prob rounded to bf16, rounded again, so
each row must be the kernel's own unscaled output times bf16(prob), bit for bit. FP8 and INT8
(Triton's MUL_ROUTED_WEIGHT): the prob multiplies the fp32 accumulator before the one rounding;
on inputs whose sums are exact (integer codes, scales of 1) the reference's accumulator is the
kernel's, so its single rounding must be matched bit for bit and rounding twice must not."""
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


# the prob after the rounding: (scheme, grouped op with probs=...)
ROUNDED_FIRST = {
    "w4a16 16x16": ("w4a16-g32", _w4a16(W4A16Config(16, 16))),
    "w4a16 32x32 k128": ("w4a16-g32", _w4a16(W4A16Config(32, 32, block_k=128))),
    "w4a16 K split": ("w4a16-g32", _w4a16(W4A16Config(16, 16, split_k=2))),
    "w4a16 op": ("w4a16-g32", w4a16_grouped_linear),
    "bf16 grouped_mm": ("none", bf16_grouped_linear),
}
# the prob in the fp32 accumulator
IN_ACCUMULATOR = {"fp8 triton": ("fp8-block", fp8_block_grouped_linear),
                  "int8": ("int8", int8_grouped_linear)}


def _case(scheme_name, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    scheme = get_scheme(scheme_name)
    qweight = scheme.quantize_weight(
        (0.1 * torch.randn(len(COUNTS), 256, 256, generator=g)).to(device))
    x = torch.randn(sum(COUNTS) + PADDING, 256, generator=g).bfloat16().to(device)
    probs = torch.rand(x.shape[0], generator=g).to(device)
    return scheme, qweight, torch.tensor(COUNTS), x, probs


def _exact_case(scheme_name, device, seed=0):
    """Integer codes with every block's amax 448, so every scale is 1.0 (448 * fp32(1/448)
    rounds to 1): the GEMM's sums are integers, exact in fp32 in any order."""
    g = torch.Generator().manual_seed(seed)
    scheme = get_scheme(scheme_name)
    w = torch.randint(-4, 5, (len(COUNTS), 256, 256), generator=g).float()
    w[:, ::128, ::128] = 448.0
    x = torch.randint(-4, 5, (sum(COUNTS) + PADDING, 256), generator=g).float()
    x[:, ::128] = 448.0 if scheme_name == "fp8-block" else 127.0
    probs = torch.rand(x.shape[0], generator=g)
    return (scheme, scheme.quantize_weight(w.to(device)), torch.tensor(COUNTS),
            x.bfloat16().to(device), probs.to(device))


@pytest.mark.parametrize("name", sorted(ROUNDED_FIRST))
def test_the_prob_multiplies_the_rounded_output(name, device):
    scheme_name, op = ROUNDED_FIRST[name]
    scheme, qweight, counts, x, probs = _case(scheme_name, device)
    assert scheme.prob_after_rounding
    routed = sum(COUNTS)
    plain = op(x, qweight, counts)[:routed]
    got = op(x, qweight, counts, probs=probs)[:routed]
    assert torch.equal(got, plain * probs[:routed, None].bfloat16())
    assert not torch.equal(got, (plain.float() * probs[:routed, None]).bfloat16())


@pytest.mark.parametrize("name", sorted(IN_ACCUMULATOR))
def test_the_prob_multiplies_the_accumulator(name, device):
    scheme_name, op = IN_ACCUMULATOR[name]
    scheme, qweight, counts, x, probs = _exact_case(scheme_name, device)
    assert not scheme.prob_after_rounding
    routed = sum(COUNTS)
    got = op(x, qweight, counts, probs=probs)[:routed]
    assert torch.equal(got, scheme.reference_grouped_matmul(x, qweight, counts, probs)[:routed])
    twice = (op(x, qweight, counts)[:routed].float() * probs[:routed, None]).bfloat16()
    assert not torch.equal(got, twice)


@pytest.mark.parametrize("name", sorted(ROUNDED_FIRST) + sorted(IN_ACCUMULATOR))
def test_probs_match_the_reference_and_cover_every_row(name, device, assert_gemm_close):
    scheme_name, op = {**ROUNDED_FIRST, **IN_ACCUMULATOR}[name]
    scheme, qweight, counts, x, probs = _case(scheme_name, device, seed=1)
    routed = sum(COUNTS)
    assert_gemm_close(op(x, qweight, counts, probs=probs)[:routed],
                      scheme.reference_grouped_matmul(x, qweight, counts, probs)[:routed])
    with pytest.raises(ValueError, match="probs: shape"):
        op(x, qweight, counts, probs=probs[:routed])


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
def test_hopper_kernels_apply_the_prob_as_the_spec(name, assert_gemm_close):
    op = HOPPER_OPS[name]
    fp8 = name.startswith("fp8")
    device = torch.device("cuda")
    scheme, qweight, counts, x, probs = (_exact_case("fp8-block", device) if fp8
                                         else _case("w4a16", device))
    routed = sum(COUNTS)
    got = op(x, qweight, counts, probs=probs)[:routed]
    if fp8:
        want = scheme.reference_grouped_matmul(x, qweight, counts, probs)[:routed]
    else:
        want = op(x, qweight, counts)[:routed] * probs[:routed, None].bfloat16()
    assert torch.equal(got, want)
    assert_gemm_close(got, scheme.reference_grouped_matmul(x, qweight, counts, probs)[:routed])
