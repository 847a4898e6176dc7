"""Session 53: this tree's INT8 row quantizer with the row's block (ONE_PASS_K, the widest
block a program holds; a row wider than its block, or not a multiple of it, is read twice)
swept over 256-2048 values, on activations, the SwiGLU rows and one Qwen3-30B-A3B layer's
experts; every output checked bit for bit against 624b5f4's kernel (`qarl_kernels_old`).
Medians of triton's do_bench in us (% of copy bandwidth: bytes read and written).
Usage: int8_blocks.py (PYTHONPATH holds qarl_kernels and qarl_kernels_old)"""
import torch
import triton

from megatron_qarl.quant import get_scheme
from qarl_kernels import int8_quantize as new
from qarl_kernels_old import int8_quantize as old

BLOCKS = (256, 512, 1024, 2048)


def us(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3


def copy_gbps():
    a = torch.empty(1 << 28, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    return 2 * a.numel() / us(lambda: b.copy_(a)) / 1e3


def pair(out):
    return (out.data, out.scale) if hasattr(out, "data") else out


def sweep(label, f_old, f_new, args, gbytes, copy):
    want = pair(f_old(*args))
    cells = [f"old {us(lambda: f_old(*args)):.1f}"]
    for block in BLOCKS:
        new.ONE_PASS_K = block
        got = pair(f_new(*args))
        assert all(torch.equal(x, y) for x, y in zip(want, got)), (label, block)
        t = us(lambda: f_new(*args))
        cells.append(f"{block}: {t:.1f} ({100 * gbytes / copy / t:.1f}%)")
    new.ONE_PASS_K = 2048
    print(f"{label}: {', '.join(cells)}", flush=True)


def main():
    scheme = get_scheme("int8")
    copy = copy_gbps()
    print(torch.cuda.get_device_name(), f"copy {copy:.0f} GB/s; us (% of copy)", flush=True)
    for m, k in [(16384, 2048), (65536, 2048), (32768, 768), (16384, 1536), (8192, 4096),
                 (256, 2048), (256, 768)]:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        sweep(f"activations {m} x {k}", old.int8_quantize_activation,
              new.int8_quantize_activation, (x,), m * k * 3 / 1e3, copy)
    for m in (32768, 256):
        h = torch.randn(m, 1536, device="cuda", dtype=torch.bfloat16)
        p = torch.rand(m, device="cuda")
        sweep(f"swiglu rows {m} x 768", old.int8_quantize_swiglu, new.int8_quantize_swiglu,
              (h, p), m * (1536 * 2 + 768) / 1e3, copy)
    for label, (e, n, k) in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
        torch.manual_seed(0)
        masters = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
                   for _ in range(e)]
        for name, w, size in [("bf16 in place", masters, 2),
                              ("fp32 stacked", torch.stack(masters).float(), 4)]:
            sweep(f"weights {label} {name}",
                  lambda w_: old.int8_quantize(w_, scheme, check_finite=False),
                  lambda w_: new.int8_quantize(w_, scheme, check_finite=False), (w,),
                  e * n * k * (size + 1) / 1e3, copy)
        del masters


if __name__ == "__main__":
    main()
