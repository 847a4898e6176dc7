"""The warp-specialized W4A16 grouped GEMM (Gluon, Hopper only). Gluon has no CPU interpreter,
so CI compiles it for sm_90 offline (the GPU code is built, not run); on a Hopper GPU the same
tests check it against the reference."""
import dataclasses

import pytest
import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import mangle_type

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_grouped_ws as ws
from qarl_kernels import w4a16_gluon as wg
from sm90_ptx import facts_of_child, ptx_counts, sass, sass_facts, serve_facts

HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


def _compile_for_sm90(x_stages: int, w_stages: int, b_stages: int, grad_input: int = 0,
                      has_probs: int = 0) -> dict:
    """PTX facts of the kernel built for sm_90a (W13 E128 shapes) with the given rings, for the
    forward (has_probs: fc2's, the router probs in its epilogue) or grad_input."""
    codes = torch.empty(128 * 1536, 256, dtype=torch.int32)
    x = torch.empty(4096, 1536 if grad_input else 2048, dtype=torch.bfloat16)
    w_desc = TensorDescriptor.from_tensor(codes, [ws.BLOCK_N, wg.STAGE_WORDS],
                                          wg.word_layout(ws.CODE_SWIZZLE))
    x_desc = wg.x_descriptor(x, ws.BLOCK_M // 2, 1)
    names = ["x_desc", "w_desc", "s_ptr", "y_ptr", "p_ptr", "counts_ptr", "num_experts", "N",
             "K", "num_tiles", "stride_se", "stride_sn", "stride_ym"]
    types = [mangle_type(x_desc), mangle_type(w_desc), "*i32", "*bf16", "*fp32", "*i32"]
    signature = dict(zip(names, types + ["i32"] * 7))
    constexprs = {"E_PAD": 128, "X_STAGES": x_stages, "W_STAGES": w_stages,
                  "B_STAGES": b_stages, "GRAD_INPUT": bool(grad_input),
                  "HAS_PROBS": bool(has_probs), "num_warps": 4}
    signature.update({name: "constexpr" for name in constexprs})
    kernel = triton.compile(
        GluonASTSource(fn=ws._w4a16_grouped_ws_kernel, signature=signature,
                       constexprs=constexprs),
        target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "maxnreg": 128})
    facts = ptx_counts(kernel.asm["ptx"], "wgmma", "wgmma_register_a", "tma_loads",
                       "scale_copies", "lop3", "prmt", "vector_loads", "vector_stores",
                       "async_fences")
    return dict(facts, shared=kernel.metadata.shared,
                **sass_facts(sass(kernel.asm["cubin"])))


@pytest.mark.parametrize("rings,grad_input,has_probs", [((2, 2, 2), 0, 0), ((2, 3, 2), 0, 1),
                                                        ((1, 4, 3), 0, 0), ((2, 2, 2), 1, 0)])
def test_compiles_for_sm90(rings, grad_input, has_probs):
    """Frontend, layouts, warp specialization and ptxas for sm_90a."""
    block_n = ws.BLOCK_N
    facts = facts_of_child(__file__, *rings, grad_input, has_probs)
    # two consumers x two 64-input halves x 4 wgmma (k = 16) for each m64 row block, issued for
    # both blocks of a consumer's rows or, in a short tile, for its first block alone
    # (2 x 2 x (2 + 1) x 4); both operands from shared memory (grad_input's: the 64 weight rows
    # of each x half, n = 128 wide)
    assert facts["wgmma"] == 48 and facts["wgmma_register_a"] == 0
    # two x boxes (one per consumer) and the codes by TMA; the scale words by cp.async
    assert facts["tma_loads"] == 3 and facts["scale_copies"] >= 1
    # the dequantizer, a weight row a thread: its 16 code words in four 16-byte loads, one
    # AND-OR per bf16 pair, no byte permute, 16-byte stores of 8 adjacent inputs, one async
    # fence a stage
    assert facts["vector_loads"] >= 4
    assert facts["lop3"] >= block_n * 128 // 2 // 128 and facts["prmt"] == 0
    assert facts["vector_stores"] >= block_n * 128 // 8 // 128
    assert facts["async_fences"] == 1
    assert facts["shared"] <= 227 * 1024  # fits an H100's shared memory per block
    # no instruction touches a wgmma's accumulator before the wait that retires it
    assert facts["sass_wgmmas"] > 0 and facts["pending_accumulator_reads"] == []


def test_applies_only_to_grouped_weights_on_hopper():
    scheme = get_scheme("w4a16")
    x = torch.empty(512, 512, dtype=torch.bfloat16)
    assert not ws.applies(x, scheme.quantize_weight(torch.randn(4, 256, 512)))  # CPU
    if HOPPER:
        x = x.cuda()
        assert ws.applies(x, scheme.quantize_weight(torch.randn(4, 256, 512, device="cuda")))
        assert not ws.applies(x, scheme.quantize_weight(torch.randn(256, 512, device="cuda")))


def _grad_input_reference(scheme, grad_out, qweight, counts):
    """grad_out_e @ dequant(W_e) in fp32 over the bf16 operand (numerics.int4_pair_operand:
    one rounding of the exact product), rows sorted by expert."""
    weight = scheme.dequantize(qweight).bfloat16().float()
    return torch.cat([g.float() @ weight[e] for e, g in enumerate(torch.split(grad_out, counts))])


RAGGED = [
    (8, 256, 512, [0, 130, 0, 257, 1, 256, 0, 600]),  # empty experts, partial row tiles
    (4, 192, 768, [129, 0, 64, 255]),  # a partial column tile (the forward's), K of six groups
    (4, 384, 768, [129, 0, 64, 255]),  # three row blocks in grad_input's sum
    (3, 128, 2048, [512, 0, 1]),
    (2, 128, 512, [700, 10]),  # two whole tiles, then one ending in the second consumer's m64
    (2, 128, 256, [1, 0]),  # one row, K of two groups
]


@pytest.mark.skipif(not HOPPER, reason="Gluon warp specialization and TMA need an SM90 GPU")
@pytest.mark.parametrize("rings", [(2, 2, 2), (1, 4, 3)])
@pytest.mark.parametrize("grad_input,e,n,k,counts", [
    (mode, *case) for mode in (False, True) for case in RAGGED
    if not (mode and case[1] % ws.BLOCK_N)])  # grad_input takes whole row blocks
def test_matches_reference(assert_gemm_close, rings, grad_input, e, n, k, counts):
    """y = x @ W^T, or grad_input's grad_out @ W, against the reference."""
    torch.manual_seed(0)
    scheme = get_scheme("w4a16")
    qweight = scheme.quantize_weight(torch.randn(e, n, k, device="cuda") * 0.05)
    tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
    x = torch.randn(sum(counts), n if grad_input else k, device="cuda").bfloat16()
    if grad_input:
        assert ws.applies_grad_input(x, qweight)
        run, want = ws.w4a16_grouped_ws_grad_input, _grad_input_reference(scheme, x, qweight,
                                                                         counts)
    else:
        assert ws.applies(x, qweight)
        run, want = ws.w4a16_grouped_ws, scheme.reference_grouped_matmul(x, qweight,
                                                                         tokens.cpu())
    got = run(x, qweight, tokens, *rings)
    assert got.shape == want.shape
    assert_gemm_close(got, want)
    assert torch.equal(run(x, qweight, tokens, *rings), got)  # repeats its bits


def test_grad_input_needs_whole_row_blocks(monkeypatch):
    """A last step past the weight's rows would sum the next expert's rows in."""
    monkeypatch.setattr(ws, "applies", lambda x, qweight: True)  # the device and tensors aside
    scheme = get_scheme("w4a16")
    for rows, whole in ((192, False), (256, True)):
        qweight = scheme.quantize_weight(torch.randn(2, rows, 256))
        grad_out = torch.empty(8, rows, dtype=torch.bfloat16)
        assert ws.applies_grad_input(grad_out, qweight) == whole


@pytest.mark.skipif(not HOPPER, reason="Gluon warp specialization and TMA need an SM90 GPU")
def test_repeats_its_bits_call_after_call():
    """A code stage freed before its words were used let a TMA refill overtake the loads: 1 of
    100 calls of W13 E128 at 64 rows an expert came out wrong (round 37). 200 calls here."""
    torch.manual_seed(0)
    scheme = get_scheme("w4a16")
    qweight = scheme.quantize_weight(torch.randn(128, 1536, 2048, device="cuda") * 0.05)
    tokens = torch.full((128, ), 64, device="cuda", dtype=torch.int32)
    x = torch.randn(128 * 64, 2048, device="cuda").bfloat16()
    first = ws.w4a16_grouped_ws(x, qweight, tokens)
    wrong = sum(not torch.equal(ws.w4a16_grouped_ws(x, qweight, tokens), first)
                for _ in range(200))
    assert wrong == 0


@pytest.mark.skipif(not HOPPER, reason="Gluon warp specialization and TMA need an SM90 GPU")
def test_grouped_op_takes_it_from_its_rows_per_expert(assert_gemm_close, monkeypatch):
    from qarl_kernels import w4a16_gemm
    torch.manual_seed(0)
    scheme = get_scheme("w4a16")
    qweight = scheme.quantize_weight(torch.randn(4, 256, 512, device="cuda") * 0.05)
    tokens = torch.tensor([300, 0, 260, 500], dtype=torch.int32)  # 265 rows per expert
    x = torch.randn(2048 * 4, 512, device="cuda").bfloat16()
    calls = []
    monkeypatch.setattr(w4a16_gemm, "w4a16_grouped_ws",
                        lambda *a, **kw: calls.append(a) or ws.w4a16_grouped_ws(*a, **kw))
    got = w4a16_gemm.w4a16_grouped_linear(x[:int(tokens.sum())], qweight, tokens)
    assert len(calls) == 1
    assert_gemm_close(got, scheme.reference_grouped_matmul(x[:int(tokens.sum())], qweight,
                                                           tokens))
    below = w4a16_gemm.WS_ROWS_PER_EXPERT.start - 1
    w4a16_gemm.w4a16_grouped_linear(x[:below * 4], qweight, torch.tensor([below] * 4))
    assert len(calls) == 1  # under WS_ROWS_PER_EXPERT: the Triton kernel
    w4a16_gemm.w4a16_grouped_linear(x, qweight, torch.tensor([2048] * 4))
    assert len(calls) == 1  # over it: dequantize + torch._grouped_mm
    probs = torch.rand(x.shape[0], device="cuda")  # fc2: its epilogue saves a pass over y
    got = w4a16_gemm.w4a16_grouped_linear(x, qweight, torch.tensor([2048] * 4), probs=probs)
    assert len(calls) == 2
    counts = torch.full((4, ), 2048, device="cuda", dtype=torch.int32)
    plain = ws.w4a16_grouped_ws(x, qweight, counts)
    assert torch.equal(got, plain * probs[:, None].bfloat16())
    kept = dataclasses.replace(qweight, keep_operand=True)
    w4a16_gemm.w4a16_grouped_linear(x[:int(tokens.sum())], kept, tokens, probs=probs[:1060])
    assert len(calls) == 2  # a kept operand is multiplied by torch._grouped_mm


@pytest.mark.skipif(not HOPPER, reason="Gluon warp specialization and TMA need an SM90 GPU")
def test_backward_takes_it_below_its_rows_per_expert(assert_gemm_close, monkeypatch):
    from qarl_kernels import moe_backward
    torch.manual_seed(0)
    scheme = get_scheme("w4a16")
    qweight = scheme.quantize_weight(torch.randn(128, 256, 2048, device="cuda") * 0.05)
    calls = []
    monkeypatch.setattr(moe_backward, "w4a16_grouped_ws_grad_input",
                        lambda *a: calls.append(a) or ws.w4a16_grouped_ws_grad_input(*a))
    tokens = torch.full((128, ), 40, dtype=torch.int32)  # on the host, as Megatron's are
    grad_out = torch.randn(128 * 40, 256, device="cuda").bfloat16()
    got = moe_backward.w4a16_grouped_grad_input(grad_out, qweight, tokens)
    assert len(calls) == 1
    assert_gemm_close(got, _grad_input_reference(scheme, grad_out, qweight, [40] * 128))
    kept = dataclasses.replace(qweight, keep_operand=True)
    assert_gemm_close(moe_backward.w4a16_grouped_grad_input(grad_out, kept, tokens), got)
    assert len(calls) == 1  # a kept operand is multiplied by torch._grouped_mm


if __name__ == "__main__":
    serve_facts(_compile_for_sm90)
