"""Session 53: 624b5f4's INT8 row quantizer (`qarl_kernels_old`) against this tree's, timed in
CUDA graphs of 10 calls, three rounds alternating old and new (their medians, then every
round's), on activations from decode to training sizes, the SwiGLU rows and one
Qwen3-30B-A3B layer's experts; outputs checked bit for bit first. Inputs rotate over copies
past 2x L2 (at most 8 copies: a
decode-size input lives in L2 anyway; call 4 ran out of time building graphs over 65536
copies of one token). us a call (% of copy bandwidth: bytes read and written).
Usage: int8_graph_ab.py (PYTHONPATH holds qarl_kernels and qarl_kernels_old)"""
import statistics

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import int8_quantize as new
from qarl_kernels.bench_setup import copies_for, graph_us
from qarl_kernels_old import int8_quantize as old

ROUNDS = 3


def copy_gbps():
    a = torch.empty(1 << 28, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    return 2 * a.numel() / graph_us([lambda: b.copy_(a)], replays=20, calls=10) / 1e3


def pair(out):
    return (out.data, out.scale) if hasattr(out, "data") else out


def compare(label, f_old, f_new, inputs, gbytes, copy):
    a, b = pair(f_old(*inputs[0])), pair(f_new(*inputs[0]))
    assert all(torch.equal(x, y) for x, y in zip(a, b)), label
    olds, news = [], []
    for _ in range(ROUNDS):
        olds.append(graph_us([lambda a=a: f_old(*a) for a in inputs], replays=40, calls=10))
        news.append(graph_us([lambda a=a: f_new(*a) for a in inputs], replays=40, calls=10))
    t_old, t_new = statistics.median(olds), statistics.median(news)
    print(f"{label}: old {t_old:.1f} us ({100 * gbytes / copy / t_old:.1f}% of copy), new "
          f"{t_new:.1f} us ({100 * gbytes / copy / t_new:.1f}%), new/old {t_new / t_old:.3f}"
          f" [old {' '.join(f'{t:.1f}' for t in olds)}; new {' '.join(f'{t:.1f}' for t in news)}]",
          flush=True)


def main():
    scheme = get_scheme("int8")
    copy = copy_gbps()
    print(torch.cuda.get_device_name(), f"copy {copy:.0f} GB/s", flush=True)
    for m, k in [(1, 2048), (8, 2048), (64, 2048), (256, 2048), (256, 768), (4096, 2048),
                 (16384, 2048), (65536, 2048), (32768, 768), (8192, 4096)]:
        inputs = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16),)
                  for _ in range(min(8, copies_for(m * k * 2)))]
        compare(f"activations {m} x {k}", old.int8_quantize_activation,
                new.int8_quantize_activation, inputs, m * k * 3 / 1e3, copy)
    for m in (256, 32768):
        inputs = [(torch.randn(m, 1536, device="cuda", dtype=torch.bfloat16),
                   torch.rand(m, device="cuda"))
                  for _ in range(min(8, copies_for(m * 1536 * 2)))]
        compare(f"swiglu rows {m} x 768", old.int8_quantize_swiglu, new.int8_quantize_swiglu,
                inputs, m * (1536 * 2 + 768) / 1e3, copy)
    for label, (e, n, k) in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
        torch.manual_seed(0)
        masters = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
                   for _ in range(e)]
        for name, w, size in [("bf16 in place", masters, 2),
                              ("fp32 stacked", torch.stack(masters).float(), 4)]:
            compare(f"weights {label} {name}",
                    lambda w_: old.int8_quantize(w_, scheme, check_finite=False),
                    lambda w_: new.int8_quantize(w_, scheme, check_finite=False), [(w,)],
                    e * n * k * (size + 1) / 1e3, copy)
        del masters


if __name__ == "__main__":
    main()
