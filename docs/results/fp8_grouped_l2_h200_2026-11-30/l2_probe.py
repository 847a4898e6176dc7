"""Session 56: is the FP8 grouped GEMM (fp8_grouped_ws) bound by L2-to-SM bandwidth?
For W13/W2 at EP8 and E128 it times the GEMM alone (CUDA graphs) with 256- and 128-wide tiles
and divides the bytes its tiles read from L2 (each 128-row tile reads its A rows and its B
columns once per 128-deep K step) by the time; beside that, an L2-resident read ceiling (a
Triton kernel re-reading 8 MiB with 16-byte loads from every SM).
Usage: l2_probe.py [LAUNCHES] -- with LAUNCHES, no timing: W13 EP8 M=16384's GEMM runs LAUNCHES
times with each tile width (256 first) for a profiler to pick (PYTHONPATH holds qarl_kernels)."""
import sys

import torch
import triton
import triton.language as tl

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import GROUPED_SHAPES, TOP_K
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.fp8_grouped_ws import BLOCK_M, fp8_grouped_ws
from qarl_kernels.fp8_quantize import fp8_block_quantize, fp8_quantize_activation

SHAPES = {label: (e, n, k) for label, e, n, k in GROUPED_SHAPES[:4]}


@triton.jit
def _l2_read(src, out, n_words, iters, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.int32)
    step = tl.num_programs(0) * BLOCK
    for i in range(iters):
        start = (tl.program_id(0) * BLOCK + i * step) % n_words
        acc ^= tl.load(src + start + offs)
    tl.store(out + tl.program_id(0) * BLOCK + offs, acc)


def l2_ceiling():
    words, block, iters = 2 * 2**20, 4096, 256
    src = torch.randint(0, 1 << 30, (words, ), device="cuda", dtype=torch.int32)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for per_sm in (4, 8):
        grid = sms * per_sm
        out = torch.empty(grid * block, device="cuda", dtype=torch.int32)
        t = graph_us([lambda: _l2_read[(grid, )](src, out, words, iters, BLOCK=block,
                                                 num_warps=8)], 20)
        print(f"L2-resident read, {per_sm} programs an SM: "
              f"{grid * iters * block * 4 / t / 1e6:.2f} TB/s ({t:.1f} us)", flush=True)


def tile_bytes(counts, n, k, block_n):
    tiles = sum(triton.cdiv(int(c), BLOCK_M) for c in counts.tolist()) * triton.cdiv(n, block_n)
    return tiles * triton.cdiv(k, 128) * (BLOCK_M + block_n) * 128


def case(label, tokens):
    e, n, k = SHAPES[label]
    qw = fp8_block_quantize(torch.randn(e, n, k, device="cuda"), get_scheme("fp8-block"))
    counts = route(tokens, e, TOP_K)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    xq, xs = fp8_quantize_activation(x)
    return qw, counts, xq, xs


def main():
    launches = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    if launches:
        qw, counts, xq, xs = case("W13 EP8", 16384)
        for tiles in ((256, 3), (128, 4)):
            for _ in range(launches):
                fp8_grouped_ws(xq, xs, qw, counts, tiles)
        torch.cuda.synchronize()
        return
    print(torch.cuda.get_device_name(), flush=True)
    l2_ceiling()
    for label in SHAPES:
        for tokens in (4096, 16384):
            qw, counts, xq, xs = case(label, tokens)
            e, n, k = SHAPES[label]
            ref = fp8_grouped_ws(xq, xs, qw, counts, (256, 3))
            for tiles in ((256, 3), (128, 4)):
                assert torch.equal(fp8_grouped_ws(xq, xs, qw, counts, tiles), ref)
                t = graph_us([lambda: fp8_grouped_ws(xq, xs, qw, counts, tiles)], 20)
                flop = 2 * xq.shape[0] * n * k
                read = tile_bytes(counts, n, k, tiles[0])
                print(f"{label} M={tokens} tiles {tiles}: {t:.1f} us, {flop / t / 1e6:.0f} "
                      f"TFLOP/s, tiles read {read / 1e9:.2f} GB from L2 = "
                      f"{read / t / 1e6:.2f} TB/s", flush=True)


if __name__ == "__main__":
    main()
