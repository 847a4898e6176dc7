import re

import pytest
import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_gemv
from qarl_kernels.w4a16_gemv import w4a16_gemv as gemv

from sm90_ptx import facts_of_child, serve_facts


def _weight(n, k, group, device):
    torch.manual_seed(0)
    scheme = get_scheme(f"w4a16-g{group}")
    return scheme, scheme.quantize_weight(torch.randn(1, n, k, device=device))[0]


@pytest.mark.parametrize("tokens", [1, 2, 3, 4])
@pytest.mark.parametrize("n,k,group,block_w,split_k", [
    (48, 256, 128, 128, 1),  # K in one step
    (40, 160, 32, 128, 1),  # a partial step; rows past N in the last tile
    (40, 2048, 128, 128, 2),  # K split over two programs
    (24, 32, 32, 64, 1),  # K of a single group
])
def test_gemv_matches_reference(tokens, n, k, group, block_w, split_k, device,
                                assert_gemm_close):
    scheme, qweight = _weight(n, k, group, device)
    x = torch.randn(tokens, k, device=device).bfloat16()
    y = gemv(x, qweight, block_n=16, block_w=block_w, split_k=split_k)
    assert y.shape == (tokens, n)
    assert_gemm_close(y, scheme.reference_matmul(x, qweight))


def test_gemv_rejects_more_tokens_than_its_accumulators(device):
    _, qweight = _weight(16, 64, 32, device)
    with pytest.raises(ValueError, match="w4a16_linear"):
        gemv(torch.randn(w4a16_gemv.MAX_TOKENS + 1, 64, device=device).bfloat16(), qweight)


def _gemv_for_sm90(tokens: int) -> dict:
    """The GEMV built for sm_90 (off the interpreter; through ptxas, which checks the inline
    PTX) with the default tiles: its instructions that move data between threads, and its
    bf16x2 arithmetic."""
    names = ["x_ptr", "w_ptr", "s_ptr", "y_ptr", "partials_ptr", "counters_ptr", "N", "K",
             "stride_xm", "stride_wn", "stride_sn", "stride_ym"]
    constexprs = {"TOKENS": tokens, "GROUP": 128, "BLOCK_N": 16, "BLOCK_W": 128, "SPLIT_K": 1,
                  "EVEN_K": True, "PDL": True, "SOFTWARE": False}
    signature = dict(zip(names, ["*i32", "*i32", "*i16", "*bf16", "*fp32", "*i32"] + ["i32"] * 6))
    signature.update({name: "constexpr" for name in constexprs})
    aligned = {(names.index(name),): [["tt.divisibility", 16]]
               for name in ["x_ptr", "w_ptr", "s_ptr", "y_ptr", "K", "stride_xm", "stride_wn",
                            "stride_sn", "stride_ym"]}
    kernel = triton.compile(
        ASTSource(fn=w4a16_gemv._w4a16_gemv_kernel, signature=signature, constexprs=constexprs,
                  attrs=aligned),
        target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    assert kernel.asm["cubin"]
    loop = _k_loop(kernel.asm["ptx"])
    return {"shared": len(re.findall(r"(?:ld|st)\.shared|bar\.sync", loop)),
            "bf16x2": len(re.findall(r"(?:sub|mul)\.rn\.bf16x2", loop)),
            "ffma": len(re.findall(r"fma\.rn\.f32", loop))}


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


@pytest.mark.parametrize("tokens", [1, 4])
def test_gpu_build_keeps_each_value_in_its_thread(tokens):
    """In the K loop a thread's 128 weight values a step (16 rows x 1024 inputs over 128
    threads) take two bf16x2 instructions a pair and one FMA a value and token, and nothing goes
    through shared memory: codes, scales and x share one layout (round 54 of
    docs/kernel_rounds.md; the CUDA-core build before it moved x through shared memory every
    K step). Only the row sums after the loop may cross warps."""
    facts = facts_of_child(__file__, tokens)
    assert facts["shared"] == 0
    assert facts["bf16x2"] == 128
    assert facts["ffma"] == 128 * tokens


if __name__ == "__main__":
    serve_facts(_gemv_for_sm90)
