"""The INT8 W8A8 kernels give the reference's bits: the per-token quantizer (ties away from
zero), the dense and grouped GEMMs (exact int32 sums, the fp32 epilogue), the SwiGLU that
writes fc2's input, the per-step weight quantizer, the dispatcher's packed rows. The experts
op against its composition: test_swiglu_experts.py; the backward: test_moe_backward.py."""
import pytest
import torch

from megatron_qarl.quant import QuantizationError, get_scheme
from megatron_qarl.quant.int8 import (pack_activation_rows, packed_row_bytes, quantize_activation,
                                      unpack_activation_rows)
from megatron_qarl.quant.ops import reference_gated_activation
from qarl_kernels.int8_gemm import (int8_grouped_linear, int8_linear, int8_matmul,
                                    int8_swiglu_experts)
from qarl_kernels.int8_quantize import (ONE_PASS_K, _row_program, int8_quantize,
                                        int8_quantize_activation, int8_quantize_packed_rows,
                                        int8_quantize_swiglu)


# one block; 512 + 256 (the largest values, at the end, in the second); two passes
@pytest.mark.parametrize("k", [ONE_PASS_K, 768, ONE_PASS_K + 452])
def test_activation_quantizer_rounds_ties_away_from_zero_like_the_reference(k, device):
    torch.manual_seed(0)
    x = (torch.randn(4, k) * torch.logspace(-6, 2, k)).bfloat16()
    x[0] = 0.0  # all-zero token: the eps scale
    # 6 * fp32(127 / 12) = 63.4999981 rounds to the tie 63.5: a GPU kernel that fuses the
    # product into the fraction test (an FMA) sees 63.4999981 and rounds to 63, not 64
    x[2, :3] = torch.tensor([12.0, 6.0, -6.0])
    x[2, 3:] = 0.0
    x[1, :6] = torch.tensor([127.0, 2.5, -0.5, -3.5, 0.5, 126.5])  # 127 / amax = 1: ties
    x[1, 6:] = 0.0
    q, scale = int8_quantize_activation(x.to(device))
    want_q, want_scale = quantize_activation(x)
    assert torch.equal(q.cpu(), want_q) and torch.equal(scale.cpu(), want_scale)
    assert q[1, :6].tolist() == [127, 3, -1, -4, 1, 127]  # torch.round would give 2, -0, -4, 0
    assert q[2, :3].tolist() == [127, 64, -64]
    assert not q[0].any()


@pytest.mark.parametrize("m,dtype", [(m, d) for m in (1, 5, 40) for d in (
    torch.bfloat16, torch.float32)] + [(150, torch.bfloat16), (300, torch.bfloat16)])
def test_dense_gives_the_reference_bits(m, dtype, device):
    """16 x 32, 64 x 32 and 64 x 64 tiles (dense_tiles: 64 x 64 from 129 and past 256)."""
    torch.manual_seed(0)
    scheme = get_scheme("int8")
    qweight = scheme.quantize_weight(torch.randn(72, 300, device=device))  # N, K: ragged tiles
    x = (torch.randn(m, 300, device=device) * 3).to(dtype)
    y = int8_linear(x, qweight)
    assert y.dtype == dtype
    assert torch.equal(y, scheme.reference_matmul(x, qweight))


@pytest.mark.parametrize("tiles", [None, (16, 32, 4, 2), (64, 64, 4, 3)])
def test_grouped_gives_the_reference_bits_with_empty_experts_and_padding(tiles, device):
    torch.manual_seed(0)
    scheme = get_scheme("int8")
    qweight = scheme.quantize_weight(torch.randn(4, 48, 130, device=device))
    tokens = torch.tensor([5, 0, 19, 1])
    x = torch.randn(28, 130, device=device).bfloat16()  # 3 padding rows past the counts
    got = int8_grouped_linear(x, qweight, tokens, tiles)
    want = scheme.reference_grouped_matmul(x, qweight, tokens)
    assert torch.equal(got[:25], want[:25])


@pytest.mark.parametrize("tokens", [None, [1, 14]])
def test_nothing_is_stored_past_y(tokens, device, guard_outputs):
    """Dense, then grouped with the counts filling x: the last 16 x 32 tile holds 15 or 14 rows
    and 24 of its 32 columns, so a store without its row or column mask writes y's guard tail
    (on the GPU, also rows a neighbour tile owns). Without the guard such a store corrupted
    the heap and aborted the run (a review). No empty expert: the grid's spare tiles would
    spill past the guard."""
    from qarl_kernels import int8_gemm
    guarded = guard_outputs(int8_gemm)
    torch.manual_seed(0)
    scheme = get_scheme("int8")
    qweight = scheme.quantize_weight(torch.randn(*([] if tokens is None else [2]), 24, 130,
                                                 device=device))
    x = torch.randn(15, 130, device=device).bfloat16()
    if tokens is None:
        got, want = int8_linear(x, qweight, (16, 32, 4, 2)), scheme.reference_matmul(x, qweight)
    else:
        tokens = torch.tensor(tokens)
        got = int8_grouped_linear(x, qweight, tokens, (16, 32, 4, 2))
        want = scheme.reference_grouped_matmul(x, qweight, tokens)
    assert guarded.untouched()
    assert torch.equal(got, want)


def test_grouped_probs_give_the_reference_bits(device):
    """The prob multiplies (acc * x_scale) * w_scale in fp32, as the reference does:
    test_router_prob_epilogue's exact case has scales of 1 only, where taking the prob before
    the scales gives the same bits. fp32 tokens keep the fp32 product (a bf16 rounding would
    hide most one-ulp differences)."""
    torch.manual_seed(0)
    scheme = get_scheme("int8")
    qweight = scheme.quantize_weight(torch.randn(3, 48, 130, device=device))
    tokens = torch.tensor([5, 0, 19])
    x = torch.randn(24, 130, device=device)
    probs = torch.rand(24, device=device)
    assert torch.equal(int8_grouped_linear(x, qweight, tokens, probs=probs),
                       scheme.reference_grouped_matmul(x, qweight, tokens, probs))


def test_exact_sums_where_fp32_accumulation_would_round(device):
    """Saturated codes over K = 2048: sums up to 127^2 * 2048 = 33M, past fp32's 2^24."""
    scheme = get_scheme("int8")
    w = torch.ones(8, 2048, device=device)
    w[:, ::3] = -0.2
    qweight = scheme.quantize_weight(w)
    x = torch.ones(2, 2048, device=device).bfloat16()
    x[1, 1::2] = 0.999
    assert torch.equal(int8_linear(x, qweight), scheme.reference_matmul(x, qweight))


# F of 16 + 8, the experts' 512 + 256, past one block
@pytest.mark.parametrize("rows,ffn", [(1, 24), (5, 768), (17, ONE_PASS_K + 40)])
def test_swiglu_quantizer_equals_activation_then_quantizer(rows, ffn, device):
    """Bit for bit on the GPU, whose expf is torch's; under the interpreter numpy's exp may
    move an activation by one bf16 ulp, and so a code by one step."""
    torch.manual_seed(0)
    h = (4 * torch.randn(rows, 2 * ffn, device=device)).bfloat16()
    if rows > 1:
        h[1, :ffn] = 0.0  # a token whose activation is all zeros: the eps scale
    q, scale = int8_quantize_swiglu(h)
    want_q, want_scale = quantize_activation(reference_gated_activation(h))
    if device.type == "cuda":
        assert torch.equal(q, want_q) and torch.equal(scale, want_scale)
    else:
        assert (q.int() - want_q.int()).abs().max() <= 1
        torch.testing.assert_close(scale, want_scale, rtol=2**-7, atol=0)


def test_swiglu_quantizer_takes_the_activation_rounded_to_bf16(device):
    """gate = 20: silu(20) is 20 in fp32 with any exp, so the activation 20 * up is exact in
    fp32 and the test can ask for the codes and the scale bit for bit under the interpreter
    too: they are those of the activation rounded to bf16 (fc2's input), not of the fp32
    product."""
    up = torch.linspace(-3.0, 3.1, 24)
    h = torch.cat([torch.full((1, 24), 20.0), up[None]], 1).bfloat16().to(device)
    q, scale = int8_quantize_swiglu(h)
    want_q, want_scale = quantize_activation(reference_gated_activation(h))
    assert torch.equal(q, want_q) and torch.equal(scale, want_scale)


def test_token_rows_of_two_powers_of_two_take_two_unmasked_blocks():
    """(block, tail) of a token's row: 768 = 512 + 256 and 24 = 16 + 8 in one pass without a
    masked lane; 1100 in one masked block; past ONE_PASS_K two passes of one block."""
    x = torch.empty(1, 1, dtype=torch.bfloat16)
    assert _row_program(x, 768, True)[:2] == (512, 256)
    assert _row_program(x, 24, False)[:2] == (16, 8)
    assert _row_program(x, 1100, False)[:2] == (2048, 0)
    assert _row_program(x, 2048, False)[:2] == (2048, 0)
    assert _row_program(x, ONE_PASS_K + 2048, False)[:2] == (ONE_PASS_K, 0)


def test_swiglu_quantizer_names_the_bad_tensor(device):
    h = torch.zeros(4, 6, device=device, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="h: shape"):
        int8_quantize_swiglu(h[:, :5])
    with pytest.raises(ValueError, match="h: dtype"):
        int8_quantize_swiglu(h.float())


def test_the_fused_experts_and_grouped_linear_refuse_what_they_would_misread(device):
    """fp32 tokens came out 1% off the composed reference; a [M, 1, K] x was quantized as K = 1
    and its codes read K bytes a row (a review)."""
    scheme = get_scheme("int8")
    fc1 = scheme.quantize_weight(torch.randn(2, 8, 16, device=device))
    fc2 = scheme.quantize_weight(torch.randn(2, 16, 4, device=device))
    tokens = torch.tensor([2, 1], device=device)
    with pytest.raises(ValueError, match="x: dtype torch.float32; the fused experts take bf16"):
        int8_swiglu_experts(torch.randn(3, 16, device=device), fc1, fc2, tokens,
                            torch.ones(3, device=device))
    with pytest.raises(ValueError, match=r"x: shape \(3, 1, 16\); flatten the activations"):
        int8_grouped_linear(torch.randn(3, 1, 16, device=device).bfloat16(), fc1, tokens)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_weight_quantizer_gives_the_schemes_bits(dtype, device):
    torch.manual_seed(0)
    scheme = get_scheme("int8")
    w = torch.randn(3, 8, 2100) * torch.rand(3, 8, 1) * 4
    w[0, 0] = 0.0  # an all-zero channel: the eps scale
    w[1, 2, :3] = torch.tensor([12.0, 6.0, -6.0])  # the tie above
    w[1, 2, 3:] = 0.0
    w = w.to(dtype).to(device)
    got, want = int8_quantize(w, scheme, "experts.linear_fc1"), scheme.quantize_weight(w)
    assert got.shape == want.shape and got.scale.shape == (3, 8, 1)
    assert torch.equal(got.data, want.data) and torch.equal(got.scale, want.scale)
    assert got.data[1, 2, :3].tolist() == [127, 64, -64]


@pytest.mark.parametrize("k, block", [(768, 256), (2048, 1024), (1100, 2048), (128, 128)])
def test_masters_rows_in_unmasked_blocks_give_the_bits_and_count(k, block, device):
    """A master's row in blocks that divide it (read twice where it takes several), else in
    one block up to ONE_PASS_K; NaN/inf found in any block of a row are all counted."""
    scheme = get_scheme("int8")
    w = (torch.randn(2, 12, k) * torch.rand(2, 12, 1) * 4).bfloat16().to(device)
    assert _row_program(w, k, False, masters=True)[0] == block
    got, want = int8_quantize(w, scheme), scheme.quantize_weight(w)
    assert torch.equal(got.data, want.data) and torch.equal(got.scale, want.scale)
    w[1, 3, 0], w[1, 3, k - 1], w[0, 11, k // 2] = float("inf"), float("nan"), -float("inf")
    counter = torch.zeros(1, dtype=torch.int32, device=device)
    int8_quantize(w, scheme, check_finite=False, nonfinite=counter)
    assert counter.item() == 3


def test_weight_quantizer_names_a_diverged_weight(device):
    scheme = get_scheme("int8")
    w = torch.ones(4, 64, device=device)
    w[2, 5] = float("nan")
    w[3, 0] = float("inf")
    with pytest.raises(QuantizationError, match=r"experts.linear_fc2: 2 NaN/inf"):
        int8_quantize(w, scheme, "experts.linear_fc2")
    int8_quantize(w, scheme, "experts.linear_fc2", check_finite=False)  # unchecked: no error


def test_packed_rows_hold_the_quantizer_codes_and_scales(device):
    """The dispatcher's rows: codes then the fp32 scale, 16-byte aligned regions."""
    torch.manual_seed(0)
    x = (4 * torch.randn(7, 300, device=device)).bfloat16()
    packed = int8_quantize_packed_rows(x)
    assert packed.dtype == torch.uint8 and packed.shape == (7, packed_row_bytes(300)) == (7, 320)
    want_q, want_scale = quantize_activation(x)
    for q, scale in (unpack_activation_rows(packed, 300),
                     unpack_activation_rows(pack_activation_rows(want_q, want_scale), 300)):
        assert torch.equal(q, want_q) and torch.equal(scale, want_scale)
    with pytest.raises(ValueError, match=r"packed: .*INT8 rows of 300 inputs .*\[tokens, 320\]"):
        unpack_activation_rows(torch.zeros(2, 300, dtype=torch.uint8), 300)


def test_experts_op_takes_the_dispatchers_packed_rows(device):
    """Tokens quantized before the dispatch give the same experts output as bf16 tokens."""
    torch.manual_seed(0)
    scheme = get_scheme("int8")
    fc1 = scheme.quantize_weight(0.1 * torch.randn(3, 320, 128, device=device))
    fc2 = scheme.quantize_weight(0.1 * torch.randn(3, 128, 160, device=device))
    tokens = torch.tensor([5, 0, 4])
    x = torch.randn(9, 128, device=device).bfloat16()
    probs = torch.rand(9, device=device)
    assert torch.equal(int8_swiglu_experts(int8_quantize_packed_rows(x), fc1, fc2, tokens, probs),
                       int8_swiglu_experts(x, fc1, fc2, tokens, probs))


def test_int8_matmul_reads_codes_by_their_strides_and_refuses_others(device):
    """A transposed-layout codes tensor was read as if its rows were contiguous (62 off), and
    unquantized bf16 passed as codes was multiplied as such (a review)."""
    scheme = get_scheme("int8")
    qweight = scheme.quantize_weight(torch.randn(12, 32, device=device))
    x = torch.randn(5, 32, device=device).bfloat16()
    xq, xs = int8_quantize_activation(x)
    want = int8_matmul(xq, xs, qweight)
    assert torch.equal(int8_matmul(xq.t().contiguous().t(), xs, qweight), want)
    with pytest.raises(ValueError, match=r"xq: torch.bfloat16 \(5, 32\); pass the \[tokens, 32\] "
                                         r"torch.int8 codes"):
        int8_matmul(x, xs, qweight)
