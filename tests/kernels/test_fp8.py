import re

import pytest
import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from megatron_qarl.quant import QuantizationError, get_scheme
from megatron_qarl.quant.fp8_block import (FP8_DTYPE, pack_activation_rows, packed_row_bytes,
                                          quantize_activation, unpack_activation_rows)
from qarl_kernels import fp8_quantize
from qarl_kernels.fp8_gemm import (_decode_tiles, fp8_block_grouped_linear,
                                   fp8_block_grouped_packed, fp8_block_linear,
                                   scaled_mm_applies)
from qarl_kernels.fp8_quantize import (ONE_ROW_PROGRAMS, fp8_block_quantize,
                                       fp8_quantize_activation, fp8_quantize_packed_rows)
from sm90_ptx import facts_of_child, serve_facts


def _bits(t):
    return t.view(torch.uint8)


@pytest.mark.parametrize("shape", [(2, 130, 200), (128, 256)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_weight_quantize_bit_identical(shape, dtype, device):
    torch.manual_seed(0)
    w = torch.randn(shape) * torch.rand(*shape[:-1], 1) * 10
    w[..., 0, :] = 0.0
    w[..., 1, :7] = -1e-6  # rounds to -0.0: code 0x80, not 0x00
    w = w.to(dtype).to(device)
    scheme = get_scheme("fp8-block")
    got, want = fp8_block_quantize(w, scheme), scheme.quantize_weight(w)
    assert torch.equal(_bits(got.data), _bits(want.data))
    assert torch.equal(got.scale, want.scale)


def test_weight_quantize_finds_nonfinite_in_its_pass(device):
    """NaN or inf anywhere in a block, the last partial one included (its masked lanes load
    0), raises, naming the weight and the count."""
    w = torch.ones(2, 130, 200, device=device)
    w[0, 3, 7] = float("nan")
    w[1, 129, 199] = float("-inf")  # the last, partial block of both dims
    w[1, 0, 128] = float("inf")
    with pytest.raises(QuantizationError, match=r"experts.linear_fc1: 3 NaN/inf"):
        fp8_block_quantize(w, get_scheme("fp8-block"), "experts.linear_fc1")
    fp8_block_quantize(w, get_scheme("fp8-block"), "experts.linear_fc1", check_finite=False)


# one-row programs up to ONE_ROW_PROGRAMS rows, 16-row programs past them, of two 128-input
# blocks from TWO_BLOCK_ROWS rows (3 blocks of 300 inputs: the second program half masked)
@pytest.mark.parametrize("rows, two_block_rows", [(5, None), (ONE_ROW_PROGRAMS + 3, None),
                                                  (ONE_ROW_PROGRAMS + 3, 1)])
def test_activation_quantize_bit_identical_and_padded(rows, two_block_rows, device,
                                                      monkeypatch):
    if two_block_rows:
        monkeypatch.setattr(fp8_quantize, "TWO_BLOCK_ROWS", two_block_rows)
    torch.manual_seed(0)
    x = (torch.randn(rows, 300) * torch.logspace(-12, 3, 300)).bfloat16().to(device)
    x[1] = 0.0  # all-zero token: eps scale
    q, scale = fp8_quantize_activation(x, pad_rows_to=4, pad_blocks_to=4)
    want_q, want_scale = quantize_activation(x)
    padded = -(-rows // 4) * 4
    assert q.shape == (padded, 300) and scale.shape == (padded, 4)
    assert scale.stride() == (1, padded)
    assert torch.equal(_bits(q[:rows]), _bits(want_q))
    assert torch.equal(scale[:rows, :3], want_scale)
    assert not q[rows:].float().any() and not scale[:, 3:].any()


def test_activation_rows_with_inf_keep_the_references_codes(device):
    """A block holding an inf has an inf scale and a multiplier of 0 (rcp(inf)): its finite
    values' codes are +-0 as in the reference; every other block is exact. The inf's own code
    is unspecified."""
    torch.manual_seed(0)
    for rows in (5, fp8_quantize.TWO_BLOCK_ROWS):  # one-row programs; 16 rows x 2 blocks
        x = torch.randn(rows, 384).bfloat16()
        x[3, 5], x[3, 6], x[-3, 200] = float("inf"), -1.5, -float("inf")
        q, scale = fp8_quantize_activation(x.to(device))
        want_q, want_scale = quantize_activation(x)
        assert torch.equal(scale.cpu(), want_scale)
        assert scale[3, 0] == float("inf") and scale[-3, 1] == float("inf")
        finite = torch.isfinite(x)
        assert torch.equal(_bits(q).cpu()[finite], _bits(want_q)[finite])
        assert _bits(q)[3, 6] == 0x80  # -1.5 / inf = -0


def test_fp32_activations_take_the_references_reciprocal(device):
    """fp32 values: blocks whose amax is a bf16 value take the table's reciprocal, others the
    correctly rounded one, blocks under the 1e-10 floor the floor's. Each block holds its amax
    and the e4m3 midpoints scaled to it, where a reciprocal one ulp off rounds otherwise."""
    torch.manual_seed(0)
    grid = torch.arange(0, 127, dtype=torch.uint8).view(FP8_DTYPE).float()
    midpoints = torch.cat([(grid[1:] + grid[:-1]) / 2, torch.tensor([0.0, 448.0])]) / 448
    amax = torch.rand(8, 3) * torch.logspace(-3, 3, 8)[:, None] + 1e-3
    amax[1] = torch.tensor([1.296875, 10.375, 0.32421875])  # bf16 values whose reciprocal is
    # one ulp over the correctly rounded one (significand 38)
    amax[2, 0] = 1e-12  # under the floor
    x = (amax[:, :, None] * midpoints).reshape(8, 384)
    q, scale = fp8_quantize_activation(x.to(device))
    want_q, want_scale = quantize_activation(x)
    assert torch.equal(_bits(q).cpu(), _bits(want_q)) and torch.equal(scale.cpu(), want_scale)


def _activation_quantizer_for_sm90() -> dict:
    """How the activation quantizer built for sm_90 (off the interpreter, its pointers, K and
    strides 16-aligned as Triton specializes real launches) takes its reciprocals and rounds to
    e4m3."""
    names = ["x_ptr", "q_ptr", "s_ptr", "rcp_ptr", "counts_ptr", "num_experts", "rows",
             "rows_out", "K", "stride_xm", "stride_qm", "stride_sm", "stride_sk"]
    constexprs = {"BLOCK_R": 16, "BLOCKS": 2, "BLOCK": 128, "E_PAD": 1, "ROUTED": False,
                  "PDL": True}
    aligned = {(names.index(name),): [["tt.divisibility", 16]]
               for name in ["x_ptr", "q_ptr", "s_ptr", "K", "stride_xm", "stride_qm", "stride_sk"]}
    facts = {}
    for dtype in ["bf16", "fp32"]:
        signature = dict(zip(names, [f"*{dtype}", "*fp8e4nv", "*fp32", "*fp32", "*i32"]
                             + ["i32"] * 8))
        signature.update({name: "constexpr" for name in constexprs})
        ptx = triton.compile(
            ASTSource(fn=fp8_quantize._fp8_activation_kernel, signature=signature,
                      constexprs=constexprs, attrs=aligned),
            target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}).asm["ptx"]
        # the software rounding's marks: the subnormal path's float adds, the normal/subnormal
        # test
        facts[dtype] = {"conversions": len(re.findall(r"cvt\.rn\.satfinite\.e4m3x2\.f32", ptx)),
                        "software_rounding": len(re.findall(r"add\.f32|setp\.ge\.f32", ptx)),
                        "ieee_divisions": len(re.findall(r"div\.rn\.f32", ptx)),
                        "approximate_reciprocals": len(re.findall(r"rcp\.approx\.ftz\.f32", ptx))}
    return facts


def test_gpu_build_rounds_to_e4m3_with_the_instruction():
    """The interpreter rounds in software (these tests' bits); a GPU build converts with
    cvt.rn.satfinite, which gave the same bits for every bf16 value under a block's max on an
    H200 in 0.69-0.76x the time (docs/kernel_rounds.md, round 41). The codes multiply by
    448 x the reciprocal of their row and block's amax: a thread's 2 (16 rows x 2 blocks over
    128 threads) by the instruction the significand table holds for bf16 values, divided as
    torch divides for fp32 ones (no per-value division in either)."""
    facts = facts_of_child(__file__)
    for dtype in ["bf16", "fp32"]:
        assert facts[dtype]["conversions"] >= 1 and facts[dtype]["software_rounding"] == 0
    assert facts["fp32"]["ieee_divisions"] == 2 and facts["fp32"]["approximate_reciprocals"] == 0
    assert facts["bf16"]["ieee_divisions"] == 0 and facts["bf16"]["approximate_reciprocals"] == 2


# default tiles: one weight scale per tile and K block (one-FMA promotion); 256-wide tiles
# span two weight blocks (per-column scales); the other decode rules' tiles
@pytest.mark.parametrize("tiles", [None, (16, 256, 4, 2), (16, 128, 4, 3), (64, 128, 4, 4)])
def test_grouped_matches_reference_with_empty_experts(tiles, device, assert_gemm_close):
    torch.manual_seed(0)
    scheme = get_scheme("fp8-block")
    qweight = scheme.quantize_weight(torch.randn(3, 300, 200, device=device))
    tokens = torch.tensor([4, 0, 5])
    x = torch.randn(9, 200, device=device).bfloat16()
    assert_gemm_close(fp8_block_grouped_linear(x, qweight, tokens, tiles),
                      scheme.reference_grouped_matmul(x, qweight, tokens))


def test_grouped_stores_nothing_past_y(device, guard_outputs, assert_gemm_close):
    """The counts fill x and the last 16 x 32 tile holds 14 rows and 24 of its 32 columns: a
    store without its row or column mask writes y's guard tail (on the GPU, also rows a
    neighbour tile owns). No empty expert: the grid's spare tiles would spill past the
    guard."""
    from qarl_kernels import fp8_gemm
    guarded = guard_outputs(fp8_gemm)
    torch.manual_seed(0)
    scheme = get_scheme("fp8-block")
    qweight = scheme.quantize_weight(torch.randn(2, 24, 200, device=device))
    tokens = torch.tensor([1, 14])
    x = torch.randn(15, 200, device=device).bfloat16()
    got = fp8_block_grouped_linear(x, qweight, tokens, (16, 32, 4, 2))
    assert guarded.untouched()
    assert_gemm_close(got, scheme.reference_grouped_matmul(x, qweight, tokens))


def test_grouped_takes_the_dispatchers_packed_rows(device):
    """Packed rows hold a token's codes then its scales: codes a row stride past K apart and
    token-major scales, where the quantizer's are K-block-major. The grouped GEMM reads both
    by their strides: the bits of the quantizer's tensors."""
    torch.manual_seed(0)
    scheme = get_scheme("fp8-block")
    qweight = scheme.quantize_weight(torch.randn(2, 40, 200, device=device))
    x = torch.randn(6, 200, device=device).bfloat16()
    tokens = torch.tensor([2, 4])
    assert torch.equal(fp8_block_grouped_packed(fp8_quantize_packed_rows(x), qweight, tokens),
                       fp8_block_grouped_linear(x, qweight, tokens))


def test_grouped_returns_the_activations_dtype(device):
    """fp32 activations (a --device cuda run without --bf16) came back bf16 from the grouped
    op only; the reference, the dense op and INT8's return x's dtype."""
    scheme = get_scheme("fp8-block")
    qweight = scheme.quantize_weight(torch.randn(2, 128, 128, device=device))
    x = torch.randn(3, 128, device=device)
    tokens = torch.tensor([1, 2])
    assert fp8_block_grouped_linear(x, qweight, tokens).dtype == torch.float32
    assert scheme.reference_grouped_matmul(x, qweight, tokens).dtype == torch.float32


def test_decode_tiles_follow_the_h100_sweep():
    """fp8_gemm._decode_tiles (round 33): 64 x 64 for a handful of rows and for fc1 (K 2048)
    over few experts or under 2 rows an expert, 64 x 128 from 32 rows an expert (fc1 from
    16), else 16 x 128 with 3 stages."""
    assert _decode_tiles(8, 128, 2048) == (64, 64, 4, 4)  # one token at E128
    assert _decode_tiles(16, 128, 768) == (64, 64, 4, 4)  # two tokens, fc2 at E128
    assert _decode_tiles(64, 128, 2048) == (64, 64, 4, 4)  # fc1, half a row an expert
    assert _decode_tiles(512, 128, 2048) == (16, 128, 4, 3)  # fc1, 4 rows an expert
    assert _decode_tiles(2048, 128, 2048) == (64, 128, 4, 4)  # fc1, 16 rows an expert
    assert _decode_tiles(512, 16, 2048) == (64, 64, 4, 4)  # fc1 at EP8
    assert _decode_tiles(64, 128, 768) == (16, 128, 4, 3)  # fc2 at E128
    assert _decode_tiles(3584, 128, 768) == (16, 128, 4, 3)  # fc2, 28 rows an expert
    assert _decode_tiles(512, 16, 768) == (64, 128, 4, 4)  # fc2, 32 rows an expert


@pytest.mark.parametrize("n,k,tokens", [(n, k, t) for n, k in ((256, 384), (128, 512), (160, 200))
                                          for t in (6, 300)] + [(160, 200, 40), (160, 200, 150)])
def test_dense_matches_reference(n, k, tokens, device, assert_gemm_close):
    """On SM90 past 256 tokens scaled_mm, its weight scales padded to 4 K blocks and not; the
    Triton kernel elsewhere, on each of dense_tiles' tiles: 16 x 32 (6 tokens), 64 x 32 (40),
    64 x 64 (150)."""
    torch.manual_seed(0)
    scheme = get_scheme("fp8-block")
    qweight = scheme.quantize_weight(torch.randn(n, k, device=device))
    x = torch.randn(2, tokens // 2, k, device=device).bfloat16()
    got, want = fp8_block_linear(x, qweight).float(), scheme.reference_matmul(x, qweight).float()
    if scaled_mm_applies(x.reshape(-1, k), qweight):
        # Hopper's FP8 tensor cores sum each 128-deep block in about 14 bits, not fp32's 24
        # (DeepSeek-V3 technical report): the error follows the products' magnitude, not the
        # element's (H200: 0.012-0.020 on elements under 1 where the largest is 88-105)
        torch.testing.assert_close(got, want, rtol=2**-7, atol=2**-10 * want.abs().max().item())
    else:
        assert_gemm_close(got, want)


def test_packed_rows_hold_the_quantizer_codes_and_scales(device):
    """The tokens the MoE dispatcher moves quantized (layers.token_dispatch): one uint8 row
    per token, codes then scales, the same bits as the activation quantizer's."""
    torch.manual_seed(0)
    x = (torch.randn(7, 300) * torch.logspace(-6, 3, 300)).bfloat16().to(device)
    packed = fp8_quantize_packed_rows(x)
    assert packed.dtype == torch.uint8 and packed.shape == (7, packed_row_bytes(300))
    want_q, want_scale = quantize_activation(x)
    for q, scale in (unpack_activation_rows(packed, 300),
                     unpack_activation_rows(pack_activation_rows(want_q, want_scale), 300)):
        assert torch.equal(_bits(q), _bits(want_q)) and torch.equal(scale, want_scale)


def test_unpack_names_rows_of_another_width():
    with pytest.raises(ValueError, match=r"packed: .*uint8 \[tokens, 320\]"):
        unpack_activation_rows(torch.zeros(2, 300, dtype=torch.uint8), 300)


if __name__ == "__main__":
    serve_facts(_activation_quantizer_for_sm90)
