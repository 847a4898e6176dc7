"""The warp-specialized FP8 grouped GEMM (Gluon, Hopper only). Gluon has no CPU interpreter,
so CI compiles it for sm_90 offline (the GPU code is built, not run); on an H100 the same
tests check it against the Triton kernel bit for bit and against the reference."""
import re
from types import SimpleNamespace

import pytest
import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import mangle_type

from megatron_qarl.quant import get_scheme
from qarl_kernels import fp8_grouped_ws as ws
from qarl_kernels.fp8_gemm import _launch, _tiles, fp8_block_grouped_linear
from qarl_kernels.fp8_quantize import fp8_quantize_activation
from sm90_ptx import facts_of_child, ptx_counts, sass, sass_facts, serve_facts

HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


def _descriptor(rows, cols, block, dtype, gl_dtype):
    t = torch.empty(rows, cols, dtype=dtype)
    return TensorDescriptor.from_tensor(t, block, gl.NVMMASharedLayout.get_default_for(block,
                                                                                       gl_dtype))


def _compile_for_sm90(block_n: int, stages: int, has_probs: int = 0) -> dict:
    """PTX facts of the kernel built for sm_90a with the given tiles (has_probs: fc2's, the
    router probs in its epilogue)."""
    sub_n = min(block_n, 128)
    descs = [_descriptor(4096, 2048, [64, 128], torch.float8_e4m3fn, gl.float8e4nv),
             _descriptor(128 * 1536, 2048, [block_n, 128], torch.float8_e4m3fn, gl.float8e4nv),
             _descriptor(4096, 1536, [64, sub_n], torch.bfloat16, gl.bfloat16)]
    names = ["a_desc", "b_desc", "c_desc", "xs_ptr", "ws_ptr", "y_ptr", "p_ptr", "counts_ptr",
             "num_experts", "N", "K", "num_tiles", "num_rows", "stride_xsk", "stride_wse",
             "stride_wsn", "stride_ym"]
    types = [mangle_type(d) for d in descs] + ["*fp32", "*fp32", "*bf16", "*fp32", "*i32"]
    signature = dict(zip(names, types + ["i32"] * 9))
    constexprs = {"E_PAD": 128, "STAGES": stages, "HAS_PROBS": bool(has_probs), "num_warps": 4}
    signature.update({name: "constexpr" for name in constexprs})
    kernel = triton.compile(
        GluonASTSource(fn=ws._fp8_grouped_ws_kernel, signature=signature, constexprs=constexprs),
        target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "maxnreg": 168})
    ptx = kernel.asm["ptx"]
    facts = ptx_counts(ptx, "wgmma", "tma_loads", "tma_stores", "global_loads", "scale_copies",
                       "copy_arrives")
    return dict(facts, shared=kernel.metadata.shared,
                **sass_facts(sass(kernel.asm["cubin"])),
                consumer_registers=bool(
        re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+216", ptx)))


@pytest.mark.parametrize("block_n,stages,has_probs", [(256, 3, 0), (128, 4, 0), (128, 4, 1)])
def test_compiles_for_sm90(block_n, stages, has_probs):
    """Frontend, layouts, warp specialization and ptxas for sm_90a."""
    facts = facts_of_child(__file__, block_n, stages, has_probs)
    # 4 wgmma (k=32) per 128-deep block and 128-wide accumulator, in each of two consumers
    assert facts["wgmma"] == 8 * (block_n // min(block_n, 128))
    assert facts["tma_loads"] == 3 and facts["tma_stores"] >= 1
    assert facts["consumer_registers"]
    # the scales ride in the ring (cp.async completing the stage's barrier): no consumer waits
    # on a global load, the only ones left are the expert counts' (every warp holds all 128:
    # 4 a thread), and fc2's router probs
    assert facts["scale_copies"] >= 2 and facts["copy_arrives"] == 1
    assert (facts["global_loads"] > 128 // 32) if has_probs else facts["global_loads"] == 128 // 32
    assert facts["shared"] <= 227 * 1024  # fits an H100's shared memory per block
    # no instruction touches a wgmma's accumulator before the wait that retires it
    assert facts["sass_wgmmas"] > 0 and facts["pending_accumulator_reads"] == []


def test_applies_only_to_large_hopper_batches():
    scheme = get_scheme("fp8-block")
    qweight = scheme.quantize_weight(torch.randn(4, 256, 256))
    assert not ws.applies(torch.empty(ws.MIN_ROWS, 256), qweight)  # CPU
    assert ws.default_tiles(16384) == (256, 3) and ws.default_tiles(8192) == (128, 4)


@pytest.mark.parametrize("experts,rows,routed,taken", [
    (16, 2047, None, False), (16, 2048, None, True),  # from 2048 rows (256 tokens of top-8)
    (128, 4095, None, False), (128, 4096, None, True),  # and 32 rows an expert
    (16, 8192, 2047, False), (16, 8192, 2048, True),  # a padded x: the routed rows count
])
def test_applies_from_its_crossover(monkeypatch, experts, rows, routed, taken):
    """On Hopper (faked), from 2048 rows and 32 rows an expert, where the kernel is 1.05-1.36x
    the Triton kernel (H100, round 9); at 1024 rows they tie."""
    monkeypatch.setattr(ws, "is_hopper", lambda device: True)
    qweight = get_scheme("fp8-block").quantize_weight(torch.zeros(experts, 128, 256))
    xq = SimpleNamespace(is_cuda=True, device=torch.device("cuda"), shape=(rows, 256))
    assert ws.applies(xq, qweight, routed) == taken


@pytest.mark.skipif(not HOPPER, reason="Gluon warp specialization and TMA need an SM90 GPU")
@pytest.mark.parametrize("tiles", [(256, 3), (128, 4), (256, 2)])
@pytest.mark.parametrize("e,n,k,counts", [
    (8, 256, 384, [0, 130, 0, 257, 1, 128, 0, 300]),  # empty experts, partial tiles
    (4, 384, 320, [129, 0, 64, 255]),  # N not a multiple of 256, K of 128
    (3, 128, 2048, [512, 0, 1]),
])
def test_matches_triton_kernel_bit_for_bit(tiles, e, n, k, counts):
    torch.manual_seed(0)
    scheme = get_scheme("fp8-block")
    qweight = scheme.quantize_weight(torch.randn(e, n, k, device="cuda"))
    tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
    x = torch.randn(sum(counts), k, device="cuda").bfloat16()
    xq, xs = fp8_quantize_activation(x)
    want = _launch(xq, xs, qweight, tokens, e, False, *_tiles(256, k))
    assert torch.equal(ws.fp8_grouped_ws(xq, xs, qweight, tokens, tiles), want)


@pytest.mark.skipif(not HOPPER, reason="Gluon warp specialization and TMA need an SM90 GPU")
def test_grouped_op_takes_it_and_matches_reference(assert_gemm_close):
    torch.manual_seed(0)
    scheme = get_scheme("fp8-block")
    qweight = scheme.quantize_weight(torch.randn(64, 256, 256, device="cuda") * 0.05)
    tokens = torch.full((64, ), 130, dtype=torch.int32)
    x = torch.randn(int(tokens.sum()), 256, device="cuda").bfloat16()
    assert ws.applies(x, qweight)
    assert_gemm_close(fp8_block_grouped_linear(x, qweight, tokens),
                      scheme.reference_grouped_matmul(x, qweight, tokens))


if __name__ == "__main__":
    serve_facts(_compile_for_sm90)
