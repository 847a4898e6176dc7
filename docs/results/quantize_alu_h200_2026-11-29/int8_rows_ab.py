"""Session 52: the INT8 row quantizer of 624b5f4 (`qarl_kernels_old`: one row a program, the
code by truncation and an int-float round trip) against this tree's (ROWS rows a program, the
code from the bits of one add: int8_quantize._codes_half_away), for each ROWS, on one
Qwen3-30B-A3B layer's experts (bf16 masters in place and stacked, fp32 stacked), activations
and the SwiGLU rows; outputs checked bit for bit against the old kernel first. Medians of
triton's do_bench; % of copy counts the bytes read and written.
Usage: int8_rows_ab.py (PYTHONPATH holds qarl_kernels and qarl_kernels_old)"""
import torch
import triton

from megatron_qarl.quant import get_scheme
from qarl_kernels import int8_quantize as new
from qarl_kernels_old import int8_quantize as old

ROWS = (1, 2, 4, 8)


def us(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3


def copy_gbps():
    a = torch.empty(1 << 28, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    return 2 * a.numel() / us(lambda: b.copy_(a)) / 1e3


def run(label, f_old, f_new, gbytes, copy):
    a, b = f_old(), f_new(None)
    a, b = (a.data, a.scale) if hasattr(a, "data") else a, (
        (b.data, b.scale) if hasattr(b, "data") else b)
    assert all(torch.equal(x, y) for x, y in zip(a, b)), label
    t_old = us(f_old)
    cells = []
    for rows in ROWS:
        c = f_new(rows)
        c = (c.data, c.scale) if hasattr(c, "data") else c
        assert all(torch.equal(x, y) for x, y in zip(a, c)), (label, rows)
        cells.append(f"{rows}: {us(lambda: f_new(rows)):.1f}")
    t_new = us(lambda: f_new(None))
    pct = 100 * gbytes / copy
    print(f"{label}: old {t_old:.1f} us ({pct / t_old:.1f}% of copy), new (default rows) "
          f"{t_new:.1f} us ({pct / t_new:.1f}%), new/old {t_new / t_old:.3f}; rows a program "
          f"(us): {', '.join(cells)}", flush=True)


def main():
    scheme = get_scheme("int8")
    copy = copy_gbps()
    print(torch.cuda.get_device_name(), f"copy {copy:.0f} GB/s", flush=True)
    for label, (e, n, k) in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
        torch.manual_seed(0)
        masters = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
                   for _ in range(e)]
        for name, w, size in [("bf16 in place", masters, 2),
                              ("bf16 stacked", torch.stack(masters), 2),
                              ("fp32 stacked", torch.stack(masters).float(), 4)]:
            run(f"weights {label} {name}",
                lambda: old.int8_quantize(w, scheme, check_finite=False),
                lambda rows: new.int8_quantize(w, scheme, check_finite=False, rows=rows),
                e * n * k * (size + 1) / 1e3, copy)
        del masters
    for m, k in [(16384, 2048), (32768, 768), (4096, 2048)]:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        run(f"activations {m} x {k}", lambda: old.int8_quantize_activation(x),
            lambda rows: new.int8_quantize_activation(x, rows=rows), m * k * 3 / 1e3, copy)


if __name__ == "__main__":
    main()
