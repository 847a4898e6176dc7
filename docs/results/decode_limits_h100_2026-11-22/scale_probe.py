"""Time vs work: the Gluon W4A16 kernels at W13 EP8 M=64 tiles with N (CTA count) and K (steps
per CTA) varied, 10 calls per graph. Throughput-bound: time grows with CTAs past one wave;
chain-bound: time follows steps per CTA."""
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as base
import w4g_ws

CALLS = 10  # calls per captured graph



def main():
    e = 16
    counts = route(64, e, 8)
    for n, k in ((1536, 2048), (1152, 2048), (768, 2048), (384, 2048), (192, 2048),
                 (1536, 1024), (1536, 512), (768, 4096), (384, 8192)):
        qws = _rotated_w4a16(e, n, k)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        tb = graph_us([lambda q=q: base(x, q, counts, 64, 64, 3) for q in qws], calls=CALLS)
        tw = graph_us([lambda q=q: w4g_ws.w4a16_grouped_gluon(x, q, counts, 64, 64, 3, maxnreg=80)
                       for q in qws], calls=CALLS)
        ctas = 16 * n // 64
        mb = e * n * k / 2 / 1e6
        print(f"N={n} K={k}: {ctas} CTAs x {k // 128} steps, {mb:.1f} MB int4: base {tb:.1f} us "
              f"({mb / tb * 1e3:.0f} GB/s), ws {tw:.1f} us", flush=True)
        del qws


if __name__ == "__main__":
    main()
