"""On the GPU: quant/hopper_reciprocal.py's table (an H200's) is this GPU's rcp.approx.ftz.f32,
and the FP8 activation quantizers give the codes of sgl-kernel SM90's arithmetic (built with
-use_fast_math, its `448.f / amax` is div.approx.ftz.f32: docs/results/
sglang_fp8_fast_math_h200_2026-12-01/). Any NVIDIA GPU: the quantizers run this GPU's
instruction for bf16 values, so a GPU whose reciprocal differs from the table fails here."""
import pytest
import torch
import triton
import triton.language as tl

from megatron_qarl.quant.fp8_block import AMAX_EPS, quantize_activation
from megatron_qarl.quant.hopper_reciprocal import hopper_reciprocal

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA GPU: the interpreter runs no inline PTX")


@triton.jit
def _rcp_approx(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    rcp = tl.inline_asm_elementwise("rcp.approx.ftz.f32 $0, $1;", "=r,r", [x], dtype=tl.float32,
                                    is_pure=True, pack=1)
    tl.store(out_ptr + offs, rcp, mask=offs < n)


@triton.jit
def _sgl_kernel_fp8_arithmetic(x_ptr, q_ptr, s_ptr):
    """One 128-input group: amax = max(1e-10, max|x|), scale_inv = amax * fp32(1/448),
    codes = e4m3_satfinite(x * div.approx.ftz(448, amax))."""
    g = tl.program_id(0)
    offs = g.to(tl.int64) * 128 + tl.arange(0, 128)
    x = tl.load(x_ptr + offs).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(x)), 1e-10)
    tl.store(s_ptr + g, amax * 0.002232142857142857)
    scale = tl.inline_asm_elementwise("div.approx.ftz.f32 $0, $1, $2;", "=r,r,r",
                                      [tl.full([128], 448.0, tl.float32), amax + tl.zeros_like(x)],
                                      dtype=tl.float32, is_pure=True, pack=1)
    tl.store(q_ptr + offs, tl.clamp(x * scale, -448.0, 448.0).to(tl.float8e4nv))


def test_table_is_the_gpus_reciprocal_of_every_bf16_value():
    values = torch.arange(0x0080, 0x7F80, dtype=torch.int32).to(torch.int16)
    amax = torch.cat([values.view(torch.bfloat16).float(), torch.tensor([AMAX_EPS])]).cuda()
    gpu = torch.empty_like(amax)
    _rcp_approx[(triton.cdiv(amax.numel(), 1024),)](amax, gpu, amax.numel(), BLOCK=1024)
    model = hopper_reciprocal(amax)
    assert torch.equal(gpu.view(torch.int32), model.view(torch.int32))


@pytest.mark.parametrize("spread", ["uniform", "lognormal"])
def test_activation_codes_are_sgl_kernels(spread):
    from qarl_kernels.fp8_quantize import fp8_quantize_activation

    torch.manual_seed(0)
    tokens, k = 4096, 2048
    per_token = torch.rand(tokens, 1) * 4 if spread == "uniform" else torch.randn(tokens, 1).exp()
    x = (torch.randn(tokens, k) * per_token).bfloat16().cuda()
    want_q = torch.empty(tokens, k, dtype=torch.float8_e4m3fn, device="cuda")
    want_s = torch.empty(tokens * k // 128, device="cuda")
    _sgl_kernel_fp8_arithmetic[(tokens * k // 128,)](x, want_q, want_s)
    want_s = want_s.view(tokens, -1)
    for q, s in [fp8_quantize_activation(x), quantize_activation(x)]:
        assert torch.equal(q.view(torch.uint8), want_q.view(torch.uint8))
        assert torch.equal(s, want_s)
