"""Session 52: the INT8 row quantizer of 624b5f4 (`qarl_kernels_old`: its code product through
libdevice's mul_rn, mul.rn.ftz) against this tree's (mul.rn.f32 by inline PTX, subnormals
kept), on activations, the SwiGLU rows and one layer's experts (bf16 masters, stacked);
outputs checked bit for bit against the old kernel first. Medians of triton's do_bench.
Usage: int8_ab.py (PYTHONPATH holds qarl_kernels and qarl_kernels_old)"""
import torch
import triton

from megatron_qarl.quant import get_scheme
from qarl_kernels import int8_quantize as new
from qarl_kernels_old import int8_quantize as old


def us(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3


def main():
    print(torch.cuda.get_device_name(), flush=True)
    scheme = get_scheme("int8")
    cases = []
    for m, k in [(16384, 2048), (32768, 768), (65536, 2048)]:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        cases.append((f"activations {m} x {k}", old.int8_quantize_activation,
                      new.int8_quantize_activation, (x,)))
    h = torch.randn(32768, 1536, device="cuda", dtype=torch.bfloat16)
    p = torch.rand(32768, device="cuda")
    cases.append(("swiglu rows 32768 x 768", old.int8_quantize_swiglu,
                  new.int8_quantize_swiglu, (h, p)))
    for label, (e, n, k) in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
        w = torch.randn(e, n, k, device="cuda", dtype=torch.bfloat16) * 0.02
        cases.append((f"weights {label} bf16 stacked",
                      lambda w_, f=old.int8_quantize: f(w_, scheme, check_finite=False),
                      lambda w_, f=new.int8_quantize: f(w_, scheme, check_finite=False), (w,)))
    for label, f_old, f_new, args in cases:
        a, b = f_old(*args), f_new(*args)
        a, b = (a.data, a.scale) if hasattr(a, "data") else a, (
            (b.data, b.scale) if hasattr(b, "data") else b)
        assert all(torch.equal(x, y) for x, y in zip(a, b)), label
        t_old, t_new = us(lambda: f_old(*args)), us(lambda: f_new(*args))
        print(f"{label}: old {t_old:.1f} us, new {t_new:.1f} us, new/old {t_new / t_old:.3f}",
              flush=True)


if __name__ == "__main__":
    main()
