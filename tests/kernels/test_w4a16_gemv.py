import re

import pytest
import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_gemv
from qarl_kernels.w4a16_gemv import gemv_tiles, w4a16_gemv as gemv

from sm90_ptx import facts_of_child, sass, serve_facts


def _weight(n, k, group, device):
    torch.manual_seed(0)
    scheme = get_scheme(f"w4a16-g{group}")
    return scheme, scheme.quantize_weight(torch.randn(1, n, k, device=device))[0]


@pytest.mark.parametrize("n,k,group,tiles", [
    (48, 256, 128, None),  # K in one step
    (40, 160, 32, None),  # K under a power-of-two step (masked words); rows past N
    (40, 2048, 128, (16, 128, 4)),  # two K steps
    (24, 32, 32, None),  # K of a single group
])
def test_gemv_matches_reference(n, k, group, tiles, device, assert_gemm_close):
    scheme, qweight = _weight(n, k, group, device)
    x = torch.randn(1, k, device=device).bfloat16()
    y = gemv(x, qweight, tiles)
    assert y.shape == (1, n)
    assert_gemm_close(y, scheme.reference_matmul(x, qweight))


def test_gemv_stores_no_row_past_n(device, guard_outputs, assert_gemm_close):
    """N = 44: the last program's rows 44-47 lie past the output, masked off."""
    scheme, qweight = _weight(44, 64, 32, device)
    x = torch.randn(1, 64, device=device).bfloat16()
    guarded = guard_outputs(w4a16_gemv)
    assert_gemm_close(gemv(x, qweight), scheme.reference_matmul(x, qweight))
    assert guarded.untouched()


def test_gemv_takes_a_token_at_an_odd_offset(device, assert_gemm_close):
    """A contiguous row viewed at an odd bf16 element (a slice of a larger row) could not be
    read as int32 words: a RuntimeError from the view."""
    scheme, qweight = _weight(24, 64, 32, device)
    x = torch.randn(65, device=device).bfloat16()[1:].view(1, 64)
    assert_gemm_close(gemv(x, qweight), scheme.reference_matmul(x, qweight))


def test_gemv_takes_one_token(device):
    _, qweight = _weight(16, 64, 32, device)
    with pytest.raises(ValueError, match="w4a16_linear"):
        gemv(torch.randn(2, 64, device=device).bfloat16(), qweight)


def test_tiles_take_whole_rows_of_k():
    """Attention's projections: K = 2048 and 4096 in one step of 32 cells a thread."""
    assert gemv_tiles(2048) == (8, 256, 2)
    assert gemv_tiles(4096) == (8, 512, 4)
    assert gemv_tiles(8192) == (8, 512, 4)  # two steps


def _gemv_for_sm90(k: int) -> dict:
    """The GEMV built for sm_90 (off the interpreter; through ptxas, which checks the inline
    PTX) with gemv_tiles' tiles for K inputs: its K loop's instructions that move data between
    threads, its bf16x2 arithmetic and its FMAs."""
    names = ["x_ptr", "w_ptr", "s_ptr", "y_ptr", "N", "K", "stride_wn", "stride_sn"]
    block_n, block_w, warps = gemv_tiles(k)
    constexprs = {"GROUP": 128, "BLOCK_N": block_n, "BLOCK_W": block_w,
                  "EVEN_K": True, "PDL": True, "SOFTWARE": False}
    signature = dict(zip(names, ["*i32", "*i32", "*i16", "*bf16"] + ["i32"] * 4))
    signature.update({name: "constexpr" for name in constexprs})
    aligned = {(names.index(name),): [["tt.divisibility", 16]]
               for name in ["x_ptr", "w_ptr", "s_ptr", "y_ptr", "K", "stride_wn", "stride_sn"]}
    kernel = triton.compile(
        ASTSource(fn=w4a16_gemv._w4a16_gemv_kernel, signature=signature, constexprs=constexprs,
                  attrs=aligned),
        target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
    loop = _k_loop(kernel.asm["ptx"])
    return {"spills": len(re.findall(r"\b(?:LDL|STL)\b", sass(kernel.asm["cubin"]))),
            "shared": len(re.findall(r"(?:ld|st)\.shared|bar\.sync", loop)),
            "bf16x2": len(re.findall(r"(?:sub|mul)\.rn\.bf16x2", loop)),
            "ffma": len(re.findall(r"fma\.rn\.f32", loop)),
            "grid_waits": len(re.findall(r"griddepcontrol\.wait", loop))}


def _k_loop(ptx: str) -> str:
    """The PTX from the label that the kernel's one backward branch jumps to, to that branch."""
    lines = ptx.splitlines()
    labels = {m.group(1): i for i, line in enumerate(lines)
              if (m := re.match(r"^(\$L__\w+):", line.strip()))}
    loops = [(labels[m.group(1)], i) for i, line in enumerate(lines)
             if (m := re.search(r"\bbra(?:\.uni)?\s+(\$L__\w+);", line))
             and labels.get(m.group(1), i) < i]
    assert len(loops) == 1, loops
    start, end = loops[0]
    return "\n".join(lines[start:end + 1])


@pytest.mark.parametrize("k", [2048, 4096])
def test_gpu_build_keeps_each_value_in_its_thread(k):
    """In the K loop a thread's 32 cells (256 weight values) take two bf16x2 instructions a
    pair and one FMA a value, and nothing goes through shared memory: codes, scales and x
    share one layout (round 54 of docs/kernel_rounds.md; the CUDA-core build of w4a16_gemm
    before it moved x through shared memory every K step). The previous kernel is waited for
    after the weights are asked for, inside the loop. No register spills: a predicate a cell
    for x's loads spilled 120 registers, and the call took 2-4x as long on the H200."""
    facts = facts_of_child(__file__, k)
    assert facts["spills"] == 0
    assert facts["shared"] == 0
    assert facts["bf16x2"] == 256
    assert facts["ffma"] == 256
    assert facts["grid_waits"] == 1


if __name__ == "__main__":
    serve_facts(_gemv_for_sm90)
