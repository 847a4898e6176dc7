"""Session 54: the FP8 activation quantizer (1x128 blocks, bf16 tokens) at training sizes,
swept over its program shape in CUDA graphs of 10 calls: rows a program (BLOCK_R), 128-input
blocks a program (KB_PER), warps, and the grid's order (KB_FAST: a row block's K blocks in
adjacent programs, so neighbours read one stretch of memory). FORCE_RECIP times the
quotient by the reciprocal without the block's largest amax (a cross-warp reduction; its
bits are wrong only for non-finite rows). Every variant is checked bit for bit against
fp8_quantize_activation first. Inputs rotate over copies past 2x L2 (at most 8).
us a call (% of copy bandwidth: bf16 read + e4m3 and fp32 scales written).
Usage: act_sweep.py (PYTHONPATH holds qarl_kernels)"""
import itertools
import sys

import torch
import triton
import triton.language as tl

from qarl_kernels.bench_setup import copies_for, graph_us
from qarl_kernels.fp8_quantize import _e4m3, _scale_of, fp8_quantize_activation


@triton.jit
def _sweep_kernel(x_ptr, q_ptr, s_ptr, rows, K, stride_xm, stride_sm, stride_sk,
                  BLOCK_R: tl.constexpr, KB_PER: tl.constexpr, KB_FAST: tl.constexpr,
                  FORCE_RECIP: tl.constexpr):
    if KB_FAST:
        pid_b, pid_r = tl.program_id(0), tl.program_id(1)
    else:
        pid_r, pid_b = tl.program_id(0), tl.program_id(1)
    offs_r = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_b = pid_b * KB_PER + tl.arange(0, KB_PER)
    offs_k = offs_b[None, :, None] * 128 + tl.arange(0, 128)[None, None, :]
    mask = (offs_r[:, None, None] < rows) & (offs_k < K)
    x = tl.load(x_ptr + offs_r[:, None, None].to(tl.int64) * stride_xm + offs_k, mask=mask,
                other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x), 2)
    scale = _scale_of(amax)
    if FORCE_RECIP:
        largest = 0.0
    else:
        largest = tl.max(tl.max(amax, 1), 0)
    tl.store(q_ptr + offs_r[:, None, None].to(tl.int64) * K + offs_k,
             _e4m3(x, scale[:, :, None], largest, True), mask=mask)
    tl.store(s_ptr + offs_r[:, None] * stride_sm + offs_b[None, :] * stride_sk, scale,
             mask=(offs_r[:, None] < rows) & (offs_b[None, :] * 128 < K))


def sweep_quantize(x, block_r, kb_per, warps, kb_fast, force):
    rows, k = x.shape
    kb = triton.cdiv(k, 128)
    q = torch.empty(rows, k, device=x.device, dtype=torch.float8_e4m3fn)
    scale_t = torch.empty(kb, rows, device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(rows, block_r), triton.cdiv(kb, kb_per))
    if kb_fast:
        grid = grid[::-1]
    _sweep_kernel[grid](x, q, scale_t, rows, k, x.stride(0), scale_t.stride(1),
                        scale_t.stride(0), BLOCK_R=block_r, KB_PER=kb_per, KB_FAST=kb_fast,
                        FORCE_RECIP=force, num_warps=warps)
    return q, scale_t.t()


SHAPES = [(4096, 2048), (4096, 4096), (16384, 2048), (32768, 768), (32768, 2048),
          (131072, 2048)]


def main():
    a = torch.empty(1 << 28, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    copy = 2 * a.numel() / graph_us([lambda: b.copy_(a)], replays=20, calls=10) / 1e3
    print(f"{torch.cuda.get_device_name()}: copy {copy:.0f} GB/s", flush=True)
    del a, b
    configs = [c for c in itertools.product((8, 16, 32, 64), (1, 2, 4), (4, 8), (False, True))
               if 16 <= c[0] * c[1] * 256 // (32 * c[2]) <= 128]
    print(f"{len(configs)} configs (BLOCK_R, KB_PER, warps, KB_FAST)", flush=True)
    only = sys.argv[1:]
    for m, k in SHAPES:
        gbytes = m * k * 3 + m * (k // 128) * 4
        n = min(8, copies_for(m * k * 2))
        xs = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(n)]
        ref = fp8_quantize_activation(xs[0])
        t_op = graph_us([lambda x=x: fp8_quantize_activation(x) for x in xs], replays=40,
                        calls=10)
        results = [("op", t_op)]
        for cfg in configs + [(16, 1, 4, False, True), (16, 2, 4, True, True)]:
            block_r, kb_per, warps, kb_fast = cfg[:4]
            force = len(cfg) > 4
            if k % (kb_per * 128):
                continue
            out = sweep_quantize(xs[0], block_r, kb_per, warps, kb_fast, force)
            assert torch.equal(out[0].view(torch.uint8), ref[0].view(torch.uint8)), cfg
            assert torch.equal(out[1], ref[1]), cfg
            t = graph_us([lambda x=x: sweep_quantize(x, block_r, kb_per, warps, kb_fast, force)
                          for x in xs], replays=40, calls=10)
            results.append((f"R{block_r} B{kb_per} W{warps}{' kbfast' if kb_fast else ''}"
                            f"{' recip' if force else ''}", t))
        results.sort(key=lambda r: r[1])
        print(f"\n{m}x{k} ({n} copies): op {t_op:.1f} us ({100 * gbytes / copy / 1e3 / t_op:.1f}%)")
        for label, t in results[:12]:
            print(f"  {label:28s} {t:7.1f} us  {100 * gbytes / copy / 1e3 / t:5.1f}%  "
                  f"{t / t_op:.3f}x op")
        del xs
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
