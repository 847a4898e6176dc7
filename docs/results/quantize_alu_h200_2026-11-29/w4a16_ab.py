"""Session 52: the W4A16 quantize-and-pack of 624b5f4 (`qarl_kernels_old`, a copy of that
tree's kernels/) against this tree's, which divides by the bf16 scale through one corrected
product (numerics.div_by_bf16) and makes the nibble with one add (numerics.int4_nibbles), on
one Qwen3-30B-A3B layer's experts (E128: fc1 [1536, 2048], fc2 [2048, 768]): bf16 masters one
allocation an expert read in place (the layers' case) and stacked, fp32 stacked; with the
lane order (what Hopper runs for experts) and without. Outputs checked bit for bit against
the old kernel first. Then the new kernel's program shapes. Medians of triton's do_bench.
Usage: w4a16_ab.py [sweep] (PYTHONPATH holds qarl_kernels and qarl_kernels_old)"""
import sys

import torch
import triton

from megatron_qarl.quant import get_scheme
from qarl_kernels.w4a16_quantize import w4a16_quantize as new
from qarl_kernels_old.w4a16_quantize import w4a16_quantize as old


def us(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3


def copy_gbps():
    a = torch.empty(1 << 28, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    return 2 * a.numel() / us(lambda: b.copy_(a)) / 1e3


def moved_bytes(e, n, k, master_bytes, lanes):
    codes = e * n * k // 2
    return e * n * k * master_bytes + codes * (2 if lanes else 1) + e * n * (k // 128) * 2


def main(sweep):
    scheme = get_scheme("w4a16")
    copy = copy_gbps()
    print(torch.cuda.get_device_name(), f"copy {copy:.0f} GB/s", flush=True)
    for label, (e, n, k) in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
        torch.manual_seed(0)
        masters = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
                   for _ in range(e)]
        inputs = [("bf16 in place", masters, 2), ("bf16 stacked", torch.stack(masters), 2),
                  ("fp32 stacked", torch.stack(masters).float(), 4)]
        for name, w, size in inputs:
            for lanes in (True, False):
                want = old(w, scheme, lane_order=lanes)
                got = new(w, scheme, lane_order=lanes)
                assert torch.equal(got.data, want.data) and torch.equal(got.scale, want.scale)
                if lanes:
                    assert torch.equal(got.lane_codes[1], want.lane_codes[1])
                t_old = us(lambda: old(w, scheme, check_finite=False, lane_order=lanes))
                t_new = us(lambda: new(w, scheme, check_finite=False, lane_order=lanes))
                gb = moved_bytes(e, n, k, size, lanes) / 1e3
                print(f"{label} {name}{' + lane order' if lanes else ''}: old {t_old:.1f} us "
                      f"({100 * gb / t_old / copy:.1f}% of copy), new {t_new:.1f} us "
                      f"({100 * gb / t_new / copy:.1f}%), new/old {t_new / t_old:.3f}",
                      flush=True)
                if sweep:
                    cells = []
                    for rows in (8, 16, 32, 64):
                        for warps in (1, 2, 4, 8):
                            if rows * 128 // (32 * warps) < 8:
                                continue
                            t = us(lambda: new(w, scheme, check_finite=False, lane_order=lanes,
                                               block_rows=rows, num_warps=warps))
                            cells.append((t, rows, warps))
                    cells.sort()
                    print("  shapes (us, rows, warps), best first:",
                          " ".join(f"{t:.1f}/{r}/{wp}" for t, r, wp in cells), flush=True)
        del masters, inputs


if __name__ == "__main__":
    main("sweep" in sys.argv[1:])
