"""Session 47, call 2: W4A16 quantize-and-pack writing the lane order too (kernels/
w4a16_quantize.py, lane_order=True), rows a program x warps, one layer's experts (fp32 and
bf16 masters), every cell checked for the codes-only kernel's bits and the reorder's lanes,
timed in CUDA graphs (medians of 3). And a probe: the same kernel with each block loaded in
lane order ([rows, q, h, i, j, t]: input 64h + 32i + 8j + 2q + t), so that both outputs are
reductions of the loaded tensor with no permute (the committed kernel reduces the serving
order, then permutes its lane words)."""
import statistics
import time

import torch
import triton
import triton.language as tl

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import graph_us
from qarl_kernels.numerics import INTERPRETED, rint, round_to_bf16, to_bf16
from qarl_kernels.w4a16_lanes import to_lane_order
from qarl_kernels.w4a16_quantize import _INV_7, _bit_or, w4a16_quantize


@triton.jit
def _probe_kernel(w_ptr, packed_ptr, lanes_ptr, scale_ptr, rows, K, BLOCK_R: tl.constexpr,
                  SOFTWARE: tl.constexpr):
    pid_r = tl.program_id(0)
    g = tl.program_id(1)
    offs_r = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    r_mask = offs_r < rows
    q_ = tl.arange(0, 4)[None, :, None, None, None, None]
    h = tl.arange(0, 2)[None, None, :, None, None, None]
    i = tl.arange(0, 2)[None, None, None, :, None, None]
    j = tl.arange(0, 4)[None, None, None, None, :, None]
    t = tl.arange(0, 2)[None, None, None, None, None, :]
    r6 = offs_r[:, None, None, None, None, None]
    cols = g * 128 + 64 * h + 32 * i + 8 * j + 2 * q_ + t
    w = tl.load(w_ptr + r6.to(tl.int64) * K + cols, mask=r6 < rows, other=0.0).to(tl.float32)
    amax = tl.max(tl.max(tl.max(tl.max(tl.max(tl.abs(w), 5), 4), 3), 2), 1)
    scale = round_to_bf16(amax * _INV_7, SOFTWARE)
    s = scale[:, None, None, None, None, None]
    safe = tl.where(s > 0, s, 1.0)
    q = tl.where(s > 0, rint(tl.div_rn(w, safe)), 0.0)
    q = tl.minimum(tl.maximum(q, -8.0), 7.0).to(tl.int32) + 8
    serving = tl.reduce(tl.reduce(q << (8 * q_ + 4 * t), 5, _bit_or), 1, _bit_or)  # [R,h,i,j]
    lanes = tl.reduce(tl.reduce(q << (4 * j + 16 * t), 5, _bit_or), 4, _bit_or)  # [R,q,h,i]
    words = tl.arange(0, 16)[None, :]
    at = offs_r[:, None].to(tl.int64) * (K // 8) + g * 16 + words
    tl.store(packed_ptr + at, tl.reshape(serving, [BLOCK_R, 16]), mask=r_mask[:, None])
    tl.store(lanes_ptr + at, tl.reshape(lanes, [BLOCK_R, 16]), mask=r_mask[:, None])
    tl.store(scale_ptr + offs_r.to(tl.int64) * (K // 128) + g, to_bf16(scale, SOFTWARE),
             mask=r_mask)


def probe(w, block_rows, warps):
    k = w.shape[-1]
    w2 = w.reshape(-1, k)
    packed = torch.empty(*w.shape[:-1], k // 8, device=w.device, dtype=torch.int32)
    lanes = torch.empty_like(packed)
    scale = torch.empty(*w.shape[:-1], k // 128, device=w.device, dtype=torch.bfloat16)
    grid = (triton.cdiv(w2.shape[0], block_rows), k // 128)
    _probe_kernel[grid](w2, packed, lanes, scale, w2.shape[0], k, BLOCK_R=block_rows,
                        SOFTWARE=INTERPRETED, num_warps=warps)
    return packed, lanes, scale


def main():
    scheme = get_scheme("w4a16")
    for name, shape in (("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))):
        for dtype in (torch.float32, torch.bfloat16):
            w = torch.randn(shape, device="cuda").to(dtype)
            want = w4a16_quantize(w, scheme, check_finite=False, lane_order=False)
            want_lanes = to_lane_order(want.data)
            nbytes = w.numel() * (w.element_size() + 1.0) + w.numel() // 128 * 2
            codes_only = statistics.median(graph_us([lambda: w4a16_quantize(
                w, scheme, check_finite=False, lane_order=False)]) for _ in range(3))
            times = {}
            for kind in ("fused", "probe"):
                for rows in (4, 8, 16, 32):
                    for warps in (1, 2, 4):
                        if kind == "fused":
                            def fn(r=rows, n=warps):
                                return w4a16_quantize(w, scheme, check_finite=False,
                                                      block_rows=r, num_warps=n,
                                                      lane_order=True)
                            got = fn()
                            got = (got.data, got.lane_codes[1], got.scale)
                        else:
                            def fn(r=rows, n=warps):
                                return probe(w, r, n)
                            got = fn()
                        if not (torch.equal(got[0], want.data) and torch.equal(got[1], want_lanes)
                                and torch.equal(got[2], want.scale)):
                            print(f"{name} {dtype} {kind} {rows}/{warps}: BITS DIFFER", flush=True)
                            continue
                        times[(kind, rows, warps)] = statistics.median(
                            graph_us([fn]) for _ in range(3))
            best = sorted(times, key=times.get)[:6]
            print(f"{name} {dtype}: codes only (default shape) {codes_only:.1f} us; with lanes "
                  "best: " + ", ".join(f"{k} {r}/{n} {times[(k, r, n)]:.1f} us "
                                       f"({nbytes / times[(k, r, n)] / 1e3:.0f} GB/s)"
                                       for k, r, n in best)
                  + " | all: " + " ".join(f"{k[0]}{r}/{n}:{t:.1f}" for (k, r, n), t in
                                          times.items()), flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S"), flush=True)
    main()
