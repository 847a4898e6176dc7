"""Session 54, call 4: where the activation quantizer's 16-row programs should take two
128-input blocks (calls 2-3: one block wins at 64-256 rows, two from 4096), at 512 to 4096
rows of K = 768, 2048 and 4096; and the FP8 SwiGLU's program order, a row block's programs
adjacent (this tree) or the row blocks of one column block adjacent (round 49's order), at
4096 and 32768 rows of F = 768. CUDA graphs of 10 calls, medians of three rounds, inputs
rotating over copies past 2x L2 (at most 8). Usage: rule_sweep.py (PYTHONPATH holds
qarl_kernels)"""
import statistics

import torch
import triton
import triton.language as tl

from qarl_kernels import fp8_quantize as fq
from qarl_kernels.bench_setup import copies_for, graph_us

ROUNDS = 3


def median_us(fns):
    return statistics.median(graph_us(fns, replays=40, calls=10) for _ in range(ROUNDS))


@triton.jit
def _swiglu_rows_fast(h_ptr, p_ptr, q_ptr, s_ptr, rows, F, stride_hm, stride_sm, stride_sk,
                      BLOCK_R: tl.constexpr, BLOCK: tl.constexpr, SOFTWARE: tl.constexpr):
    row_programs = tl.cdiv(rows, BLOCK_R)
    fq._swiglu_rows(h_ptr, p_ptr, q_ptr, s_ptr, tl.program_id(0) % row_programs,
                    tl.program_id(0) // row_programs, rows, F, stride_hm, stride_sm, stride_sk,
                    True, BLOCK_R, 1, BLOCK, SOFTWARE)


def swiglu_rows_fast(h, probs):
    rows, ffn = h.shape[0], h.shape[1] // 2
    q = torch.empty(rows, ffn, device=h.device, dtype=torch.float8_e4m3fn)
    scale_t = torch.empty(triton.cdiv(ffn, 128), rows, device=h.device, dtype=torch.float32)
    _swiglu_rows_fast[(triton.cdiv(rows, 16) * triton.cdiv(ffn, 128),)](
        h, probs, q, scale_t, rows, ffn, h.stride(0), scale_t.stride(1), scale_t.stride(0),
        BLOCK_R=16, BLOCK=128, SOFTWARE=fq.INTERPRETED, num_warps=4)
    return q, scale_t.t()


def main():
    print(torch.cuda.get_device_name(), flush=True)
    kept = dict(fq.ROW_BLOCKS)
    for k in (768, 2048, 4096):
        for rows in (512, 1024, 2048, 4096):
            n = min(8, copies_for(rows * k * 2))
            xs = [torch.randn(rows, k, device="cuda", dtype=torch.bfloat16) for _ in range(n)]
            t = {}
            for b in (1, 2):
                fq.ROW_BLOCKS = {**kept, 2: b}
                t[b] = median_us([lambda x=x: fq.fp8_quantize_activation(x) for x in xs])
            fq.ROW_BLOCKS = kept
            print(f"activations {rows}x{k}: 1 block {t[1]:.2f} us, 2 blocks {t[2]:.2f} us, "
                  f"2/1 {t[2] / t[1]:.3f}", flush=True)
    for rows in (256, 4096, 32768):
        n = min(8, copies_for(rows * 1536 * 2))
        hs = [(torch.randn(rows, 1536, device="cuda", dtype=torch.bfloat16),
               torch.rand(rows, device="cuda")) for _ in range(n)]
        a, b = fq.fp8_quantize_swiglu(*hs[0]), swiglu_rows_fast(*hs[0])
        assert torch.equal(a[0].view(torch.uint8), b[0].view(torch.uint8))
        assert torch.equal(a[1], b[1])
        t_tree = median_us([lambda h=h: fq.fp8_quantize_swiglu(*h) for h in hs])
        t_rows = median_us([lambda h=h: swiglu_rows_fast(*h) for h in hs])
        print(f"swiglu {rows}x768: a row block's programs adjacent {t_tree:.2f} us, row blocks "
              f"adjacent {t_rows:.2f} us, {t_rows / t_tree:.3f}", flush=True)


if __name__ == "__main__":
    main()
