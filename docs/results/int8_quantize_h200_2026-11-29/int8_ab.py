"""Session 53: the INT8 row quantizer of 624b5f4 (`qarl_kernels_old`) against this tree's, on
activations, the SwiGLU rows and one Qwen3-30B-A3B layer's experts (bf16 masters in place and
stacked, fp32 stacked); outputs checked bit for bit against the old kernel first (finite
inputs), then NaN/inf counts against torch's. Medians of triton's do_bench in us; % of copy
counts the bytes read and written against a 256 MiB device copy timed the same way.
Usage: int8_ab.py (PYTHONPATH holds qarl_kernels and qarl_kernels_old)"""
import torch
import triton

from megatron_qarl.quant import get_scheme
from qarl_kernels import int8_quantize as new
from qarl_kernels_old import int8_quantize as old


def us(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3


def copy_gbps():
    a = torch.empty(1 << 28, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    return 2 * a.numel() / us(lambda: b.copy_(a)) / 1e3


def pair(out):
    return (out.data, out.scale) if hasattr(out, "data") else out


def compare(label, f_old, f_new, args, gbytes, copy):
    """Rows of 768 also with 256-value blocks (three unmasked blocks, the row read twice)
    instead of one 1024-value block a quarter masked."""
    a, b = pair(f_old(*args)), pair(f_new(*args))
    assert all(torch.equal(x, y) for x, y in zip(a, b)), label
    t_old, t_new = us(lambda: f_old(*args)), us(lambda: f_new(*args))
    line = (f"{label}: old {t_old:.1f} us ({100 * gbytes / copy / t_old:.1f}% of copy), new "
            f"{t_new:.1f} us ({100 * gbytes / copy / t_new:.1f}%), new/old {t_new / t_old:.3f}")
    if "768" in label or "W2" in label:
        new.ONE_PASS_K = 256
        c = pair(f_new(*args))
        assert all(torch.equal(x, y) for x, y in zip(a, c)), (label, 256)
        t_256 = us(lambda: f_new(*args))
        new.ONE_PASS_K = 2048
        line += f"; blocks of 256: {t_256:.1f} us ({100 * gbytes / copy / t_256:.1f}%)"
    print(line, flush=True)


def check_counts(scheme):
    """The count of NaN/inf must be torch's, one and two passes a row, in place and stacked."""
    for n, k in [(96, 768), (64, 2048), (32, 3000)]:
        masters = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
        masters[1][5, 7] = float("nan")
        masters[1][5, k - 1] = float("inf")
        masters[2][n - 1, 0] = -float("inf")
        masters[2][0, k // 2] = float("nan")
        want = sum(int((~torch.isfinite(m)).sum()) for m in masters)
        for w in (masters, torch.stack(masters), torch.stack(masters).float()):
            counter = torch.zeros(1, dtype=torch.int32, device="cuda")
            new.int8_quantize(w, scheme, check_finite=False, nonfinite=counter)
            assert int(counter) == want, (n, k, int(counter), want)
    print("NaN/inf counts: torch's in every case", flush=True)


def main():
    scheme = get_scheme("int8")
    copy = copy_gbps()
    print(torch.cuda.get_device_name(), f"copy {copy:.0f} GB/s", flush=True)
    check_counts(scheme)
    for m, k in [(16384, 2048), (32768, 768), (65536, 2048), (64, 2048)]:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        compare(f"activations {m} x {k}", old.int8_quantize_activation,
                new.int8_quantize_activation, (x,), m * k * 3 / 1e3, copy)
    h = torch.randn(32768, 1536, device="cuda", dtype=torch.bfloat16)
    p = torch.rand(32768, device="cuda")
    compare("swiglu rows 32768 x 768", old.int8_quantize_swiglu, new.int8_quantize_swiglu,
            (h, p), 32768 * (1536 * 2 + 768) / 1e3, copy)
    for label, (e, n, k) in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
        torch.manual_seed(0)
        masters = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
                   for _ in range(e)]
        for name, w, size in [("bf16 in place", masters, 2),
                              ("bf16 stacked", torch.stack(masters), 2),
                              ("fp32 stacked", torch.stack(masters).float(), 4)]:
            compare(f"weights {label} {name}",
                    lambda w_: old.int8_quantize(w_, scheme, check_finite=False),
                    lambda w_: new.int8_quantize(w_, scheme, check_finite=False), (w,),
                    e * n * k * (size + 1) / 1e3, copy)
        del masters


if __name__ == "__main__":
    main()
