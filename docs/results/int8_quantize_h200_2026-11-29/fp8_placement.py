"""Session 53: does the FP8 weight quantizer's time for W2 move with where the masters lie?
Six fresh allocations of one Qwen3-30B-A3B layer's W2 (bf16, stacked at element offsets 0,
64, 1024, 4096, 2**20, 0 of a larger buffer; and one list of per-expert masters read in
place), each timed through the FP8, INT8 and W4A16 quantizers and a plain copy of the same
bytes. Medians of triton's do_bench in us.
Usage: fp8_placement.py (PYTHONPATH holds qarl_kernels)"""
import torch
import triton

from megatron_qarl.quant import get_scheme
from qarl_kernels.fp8_quantize import fp8_block_quantize
from qarl_kernels.int8_quantize import int8_quantize
from qarl_kernels.w4a16_quantize import w4a16_quantize

E, N, K = 128, 2048, 768


def us(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3


def times(w):
    fp8, int8, w4 = get_scheme("fp8-block"), get_scheme("int8"), get_scheme("w4a16-g128")
    first = w[0] if isinstance(w, list) else w
    out = torch.empty(E * N * K, device="cuda", dtype=first.dtype)
    src = torch.cat([m.reshape(-1) for m in w]) if isinstance(w, list) else w.reshape(-1)
    return (us(lambda: fp8_block_quantize(w, fp8, check_finite=False)),
            us(lambda: int8_quantize(w, int8, check_finite=False)),
            us(lambda: w4a16_quantize(w, w4, check_finite=False)),
            us(lambda: out.copy_(src)))


def main():
    print(torch.cuda.get_device_name(), "W2 E128 bf16: fp8 / int8 / w4a16 / copy us", flush=True)
    for trial, offset in enumerate((0, 64, 1024, 4096, 1 << 20, 0)):
        buf = torch.empty(E * N * K + offset, device="cuda", dtype=torch.bfloat16)
        w = buf[offset:].view(E, N, K)
        w.normal_(0, 0.02)
        t = times(w)
        print(f"trial {trial} stacked, offset {offset}, address % 2 MiB "
              f"{w.data_ptr() % (1 << 21)}: " + " / ".join(f"{x:.1f}" for x in t), flush=True)
        del buf, w
    masters = [torch.randn(N, K, device="cuda", dtype=torch.bfloat16) * 0.02 for _ in range(E)]
    t = times(masters)
    print("in place: " + " / ".join(f"{x:.1f}" for x in t), flush=True)


if __name__ == "__main__":
    main()
