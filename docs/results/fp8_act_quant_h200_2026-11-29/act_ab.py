"""Session 54: the FP8 quantizers before this round (`qarl_kernels_old`) against this tree's,
in CUDA graphs of 10 calls, three rounds alternating old and new (medians): the activation
quantizer from decode to training sizes, the dispatcher's packed rows, the SwiGLU that writes
fc2's input, the weight quantizer from bf16 and fp32 masters (bit for bit first; call 2 only:
`--weights`). Calls 2 and 3 also timed the 128-input blocks a program (the file as of their
commits, results README).
Inputs rotate over copies past 2x L2 (at most 8). us a call (% of copy bandwidth).
Usage: act_ab.py [--weights] (PYTHONPATH holds qarl_kernels and qarl_kernels_old)"""
import statistics
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import fp8_quantize as new
from qarl_kernels.bench_setup import copies_for, graph_us
from qarl_kernels_old import fp8_quantize as old

ROUNDS = 3
K = 2048


def copy_gbps():
    a = torch.empty(1 << 28, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    return 2 * a.numel() / graph_us([lambda: b.copy_(a)], replays=20, calls=10) / 1e3


def bits(out):
    if isinstance(out, torch.Tensor):
        out = (out,)
    elif not isinstance(out, tuple):
        out = (out.data, out.scale)
    return [t.view(torch.uint8) if t.dtype == torch.float8_e4m3fn else t for t in out]


def timed(fns):
    return graph_us(fns, replays=40, calls=10)


def compare(label, f_old, f_new, inputs, nbytes, copy):
    assert all(torch.equal(a, b) for a, b in zip(bits(f_old(*inputs[0])),
                                                 bits(f_new(*inputs[0])))), label
    olds, news = [], []
    for _ in range(ROUNDS):
        olds.append(timed([lambda a=a: f_old(*a) for a in inputs]))
        news.append(timed([lambda a=a: f_new(*a) for a in inputs]))
    t_old, t_new = statistics.median(olds), statistics.median(news)
    pct = lambda t: 100 * nbytes / copy / 1e3 / t
    print(f"{label}: old {t_old:.1f} us ({pct(t_old):.1f}%), new {t_new:.1f} us "
          f"({pct(t_new):.1f}%), new/old {t_new / t_old:.3f}  rounds old "
          f"{' '.join(f'{t:.1f}' for t in olds)} new {' '.join(f'{t:.1f}' for t in news)}",
          flush=True)


def inputs_of(shape, dtype=torch.bfloat16, extra=()):
    n = min(8, copies_for(shape[0] * shape[1] * torch.finfo(dtype).bits // 8))
    return [(torch.randn(*shape, device="cuda", dtype=dtype), *extra) for _ in range(n)]


def main():
    copy = copy_gbps()
    print(f"{torch.cuda.get_device_name()}: copy {copy:.0f} GB/s", flush=True)
    print("\n# activation quantizer, x [rows, K] bf16", flush=True)
    for rows, k in [(1, K), (8, K), (32, K), (64, K), (256, K), (4096, K), (4096, 4096),
                    (16384, K), (32768, 768), (32768, K), (131072, K)]:
        compare(f"{rows}x{k}", old.fp8_quantize_activation, new.fp8_quantize_activation,
                inputs_of((rows, k)), rows * k * 3 + rows * (k // 128) * 4, copy)
    compare("4096x2048 fp32", old.fp8_quantize_activation, new.fp8_quantize_activation,
            inputs_of((4096, K), torch.float32), 4096 * K * 5 + 4096 * 16 * 4, copy)
    print("\n# dispatcher's packed rows", flush=True)
    for rows in (8, 4096, 16384):
        compare(f"packed {rows}x{K}", old.fp8_quantize_packed_rows, new.fp8_quantize_packed_rows,
                inputs_of((rows, K)), rows * K * 3 + rows * 64, copy)
    print("\n# SwiGLU to fc2's FP8 input, h [rows, 2 x 768] bf16 with probs", flush=True)
    for rows in (8, 256, 4096, 32768):
        probs = torch.rand(rows, device="cuda")
        compare(f"swiglu {rows}x768", old.fp8_quantize_swiglu, new.fp8_quantize_swiglu,
                inputs_of((rows, 1536), extra=(probs,)), rows * (1536 * 2 + 768 + 4 + 24),
                copy)
    if "--weights" in sys.argv:
        weights(copy)


def weights(copy):
    print("\n# weight quantizer, one layer's experts stacked", flush=True)
    scheme = get_scheme("fp8-block")
    for label, e, n, k in [("W13 E128", 128, 1536, 2048), ("W2 E128", 128, 2048, 768)]:
        for dtype in (torch.bfloat16, torch.float32):
            w = torch.randn(e, n, k, device="cuda", dtype=dtype)
            f = lambda mod: (lambda w: mod.fp8_block_quantize(w, scheme, check_finite=False))
            compare(f"{label} {dtype}", f(old), f(new), [(w,)],
                    w.numel() * (w.element_size() + 1), copy)
            del w


if __name__ == "__main__":
    main()
