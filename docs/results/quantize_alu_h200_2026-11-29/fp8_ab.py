"""Session 52: the FP8 quantizers of 624b5f4 (`qarl_kernels_old`) against this tree's, which
divide bf16 values by their scale through one corrected product (numerics.div_by_reciprocal):
the weight quantizer on one Qwen3-30B-A3B layer's experts (bf16 masters, one allocation an
expert, in place and stacked; fp32 stacked, whose path is unchanged), the activation quantizer
on the expert and attention GEMMs' inputs, and the SwiGLU + quantizer of fc2's input. Outputs
checked bit for bit against the old kernels first. Medians of triton's do_bench.
Usage: fp8_ab.py (PYTHONPATH holds qarl_kernels and qarl_kernels_old)"""
import torch
import triton

from megatron_qarl.quant import get_scheme
from qarl_kernels import fp8_quantize as new
from qarl_kernels_old import fp8_quantize as old


def us(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3


def copy_gbps():
    a = torch.empty(1 << 28, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    return 2 * a.numel() / us(lambda: b.copy_(a)) / 1e3


def same(a, b):
    return all(torch.equal(x.contiguous().view(torch.uint8), y.contiguous().view(torch.uint8))
               for x, y in zip(a, b))


def report(label, t_old, t_new, gbytes, copy):
    print(f"{label}: old {t_old:.1f} us ({100 * gbytes / t_old / copy:.1f}% of copy), new "
          f"{t_new:.1f} us ({100 * gbytes / t_new / copy:.1f}%), new/old {t_new / t_old:.3f}",
          flush=True)


def main():
    scheme = get_scheme("fp8-block")
    copy = copy_gbps()
    print(torch.cuda.get_device_name(), f"copy {copy:.0f} GB/s", flush=True)
    for label, (e, n, k) in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
        torch.manual_seed(0)
        masters = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
                   for _ in range(e)]
        for name, w, size in [("bf16 in place", masters, 2),
                              ("bf16 stacked", torch.stack(masters), 2),
                              ("fp32 stacked", torch.stack(masters).float(), 4)]:
            a, b = old.fp8_block_quantize(w, scheme), new.fp8_block_quantize(w, scheme)
            assert same((a.data, a.scale), (b.data, b.scale))
            gb = e * n * k * (size + 1) / 1e3
            report(f"weights {label} {name}", us(lambda: old.fp8_block_quantize(
                w, scheme, check_finite=False)), us(lambda: new.fp8_block_quantize(
                    w, scheme, check_finite=False)), gb, copy)
        del masters
    for m, k in [(4096, 2048), (16384, 2048), (4096, 4096), (16384, 768), (32768, 768)]:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        assert same(old.fp8_quantize_activation(x), new.fp8_quantize_activation(x))
        report(f"activations {m} x {k}", us(lambda: old.fp8_quantize_activation(x)),
               us(lambda: new.fp8_quantize_activation(x)), m * k * 3 / 1e3, copy)
    for m, f in [(4096, 768), (32768, 768)]:
        h = torch.randn(m, 2 * f, device="cuda", dtype=torch.bfloat16)
        p = torch.rand(m, device="cuda")
        assert same(old.fp8_quantize_swiglu(h, p), new.fp8_quantize_swiglu(h, p))
        report(f"swiglu + quantize {m} x {f}", us(lambda: old.fp8_quantize_swiglu(h, p)),
               us(lambda: new.fp8_quantize_swiglu(h, p)), m * (4 * f + 4 + f) / 1e3, copy)


if __name__ == "__main__":
    main()
