"""Session 54, call 9: why the FP8 SwiGLU is 1.016x round 49's at 32768 x 768 (call 5). Times,
in CUDA graphs of 10 calls (three rounds, medians, bit for bit first), round 49's kernel, this
tree's, and this tree's with the router prob loaded as one value a row and broadcast (as
round 49's 2-D kernel did) rather than as a [rows, 1, 1] tile. `--ncu old|new` instead runs
one shape a few times for Nsight Compute. Usage: swiglu_probe.py [--ncu old|new] (PYTHONPATH
holds qarl_kernels and qarl_kernels_old)"""
import statistics
import sys

import torch
import triton
import triton.language as tl

from qarl_kernels import fp8_quantize as new
from qarl_kernels.bench_setup import copies_for, graph_us
from qarl_kernels.numerics import round_to_bf16, swiglu
from qarl_kernels_old import fp8_quantize as old


@triton.jit
def _swiglu_prob_rows(h_ptr, p_ptr, q_ptr, s_ptr, rows, F, stride_hm, stride_sm, stride_sk,
                      BLOCK_R: tl.constexpr, BLOCK: tl.constexpr, SOFTWARE: tl.constexpr):
    block_programs = tl.cdiv(F, BLOCK)
    pid_r, pid_b = tl.program_id(0) // block_programs, tl.program_id(0) % block_programs
    offs_r = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_b = pid_b + tl.arange(0, 1)
    offs_f = new._block_columns(offs_b, BLOCK)
    mask = (offs_r[:, None, None] < rows) & (offs_f < F)
    ptrs = h_ptr + offs_r[:, None, None].to(tl.int64) * stride_hm + offs_f
    gate = tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(ptrs + F, mask=mask, other=0.0).to(tl.float32)
    prob = tl.load(p_ptr + offs_r, mask=offs_r < rows, other=0.0).to(tl.float32)
    act = swiglu(gate, up, prob[:, None, None], True, SOFTWARE)
    new._store_activation_blocks(q_ptr, s_ptr, round_to_bf16(act, SOFTWARE), offs_r, offs_b,
                                 rows, F, F, stride_sm, stride_sk, BLOCK, BF16_VALUES=True)


def swiglu_prob_rows(h, probs):
    rows, ffn = h.shape[0], h.shape[1] // 2
    q = torch.empty(rows, ffn, device=h.device, dtype=torch.float8_e4m3fn)
    scale_t = torch.empty(triton.cdiv(ffn, 128), rows, device=h.device, dtype=torch.float32)
    _swiglu_prob_rows[(triton.cdiv(rows, 16) * triton.cdiv(ffn, 128),)](
        h, probs, q, scale_t, rows, ffn, h.stride(0), scale_t.stride(1), scale_t.stride(0),
        BLOCK_R=16, BLOCK=128, SOFTWARE=new.INTERPRETED, num_warps=4)
    return q, scale_t.t()


def inputs(rows):
    n = min(8, copies_for(rows * 1536 * 2))
    return [(torch.randn(rows, 1536, device="cuda", dtype=torch.bfloat16),
             torch.rand(rows, device="cuda")) for _ in range(n)]


def main():
    if "--ncu" in sys.argv:
        fn = (old if sys.argv[-1] == "old" else new).fp8_quantize_swiglu
        h, p = inputs(32768)[0]
        for _ in range(4):
            fn(h, p)
        torch.cuda.synchronize()
        return
    print(torch.cuda.get_device_name(), flush=True)
    fns = {"round 49": old.fp8_quantize_swiglu, "this tree": new.fp8_quantize_swiglu,
           "prob a row": swiglu_prob_rows}
    for rows in (4096, 32768):
        hs = inputs(rows)
        want = [t.view(torch.uint8) if t.dtype == torch.float8_e4m3fn else t
                for t in old.fp8_quantize_swiglu(*hs[0])]
        for label, fn in fns.items():
            got = [t.view(torch.uint8) if t.dtype == torch.float8_e4m3fn else t
                   for t in fn(*hs[0])]
            assert all(torch.equal(a, b) for a, b in zip(got, want)), label
        rounds = [[graph_us([lambda h=h, fn=fn: fn(*h) for h in hs], replays=40, calls=10)
                   for fn in fns.values()] for _ in range(3)]
        print(f"swiglu {rows}x768: " + ", ".join(
            f"{label} {statistics.median(c):.2f} us" for label, c in zip(fns, zip(*rounds))),
            flush=True)


if __name__ == "__main__":
    main()
