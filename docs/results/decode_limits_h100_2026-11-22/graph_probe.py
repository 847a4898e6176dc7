"""How much of a decode-size call's time is the per-graph launch gap? Time one call per graph
(the bench's graph_us) against ten calls per graph (an engine's decode step captures many
kernels in one graph), for bf16 grouped_mm, the W4A16 op, a TMA-only stream of the int4 bytes
and torch's own read of the same bytes."""
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import graph_us, route, copies_for, ceilings
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul

CALLS = 10  # calls per captured graph



def main():
    ceil = ceilings()["copy_GBps"]
    print(f"copy {ceil:.0f} GB/s", flush=True)
    z = torch.zeros(1, device="cuda")
    print(f"tiny kernel: 1/graph {graph_us([lambda: z.add_(1)]):.1f} us, "
          f"{CALLS}/graph {graph_us([lambda: z.add_(1)], calls=CALLS):.1f} us", flush=True)
    for label, e, n, k in (("W13 EP8", 16, 1536, 2048), ("W2 EP8", 16, 2048, 768)):
        nbytes = e * n * k // 2
        bufs = [torch.randint(0, 1000, (nbytes // 4,), dtype=torch.int32, device="cuda")
                for _ in range(copies_for(nbytes))]
        outs = torch.empty((), dtype=torch.int64, device="cuda")
        fns = [lambda b=b: torch.sum(b, 0, out=outs) for b in bufs]
        print(f"{label} torch.sum of the int4 bytes ({nbytes / 1e6:.1f} MB): 1/graph "
              f"{graph_us(fns):.1f} us, {CALLS}/graph {graph_us(fns, calls=CALLS):.1f} us", flush=True)
        del bufs
        qws = _rotated_w4a16(e, n, k)
        bf = [torch.randn(e, k, n, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
              .contiguous().transpose(1, 2) for _ in range(copies_for(e * n * k * 2))]
        for m in (1, 8, 64, 256):
            counts = route(m, e, 8)
            x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
            offs = torch.cumsum(counts, 0).to(torch.int32)
            f_q = [lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws]
            f_b = [lambda w=w: torch._grouped_mm(x, w, offs=offs) for w in bf]
            a1, a10 = graph_us(f_q), graph_us(f_q, calls=CALLS)
            b1, b10 = graph_us(f_b), graph_us(f_b, calls=CALLS)
            print(f"{label} M={m}: bf16 {b1:.1f} / {b10:.1f} us; w4a16 {a1:.1f} / {a10:.1f} us; "
                  f"speedup {b1 / a1:.2f}x / {b10 / a10:.2f}x (1 / {CALLS} calls per graph)",
                  flush=True)
        del qws, bf


if __name__ == "__main__":
    main()
