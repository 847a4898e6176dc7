"""What fraction of the measured copy bandwidth (1 GiB device-to-device copy) plain torch
kernels reach when they move only as many bytes as an EP8 decode row reads: a copy of half
the bytes (read + write = the row's bytes) and a read-only reduction over them, each rotated
over buffers > 2x L2 and timed in CUDA graphs of 10 calls, as the decode table is."""
import torch
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, ceilings

peak = ceilings()
print(f"copy {peak['copy_GBps']:.0f} GB/s (1 GiB, read + write)", flush=True)
rows = [("W2 EP8 int4 words", 12.6e6), ("W13 EP8 int4 words", 25.2e6),
        ("W2 E128 M=8 int4 words", 39e6), ("W13 E128 M=8 int4 words", 77e6),
        ("W2 EP8 bf16 weights", 50.3e6), ("W13 EP8 bf16 weights", 100.7e6)]
print("| bytes | MB | copy (read + write = these bytes) us | % of copy BW | read-only sum us | % of copy BW |")
print("|---|---|---|---|---|---|")
for label, nbytes in rows:
    n = int(nbytes) // 4 // 1024 * 1024
    srcs = [torch.randint(0, 7, (n // 2,), dtype=torch.int32, device="cuda")
            for _ in range(copies_for(n * 2))]
    dsts = [torch.empty_like(s) for s in srcs]
    t_copy = graph_us([lambda s=s, d=d: d.copy_(s) for s, d in zip(srcs, dsts)], calls=STEP_CALLS)
    reads = [torch.randint(0, 7, (n,), dtype=torch.int32, device="cuda")
             for _ in range(copies_for(n * 4))]
    outs = [torch.empty((), dtype=torch.int64, device="cuda") for _ in reads]
    t_read = graph_us([lambda r=r, o=o: torch.sum(r, dim=0, out=o) for r, o in zip(reads, outs)],
                      calls=STEP_CALLS)
    mb = n * 4 / 1e6
    pc = 100 * n * 4 / t_copy / 1e3 / peak["copy_GBps"]
    pr = 100 * n * 4 / t_read / 1e3 / peak["copy_GBps"]
    print(f"| {label} | {mb:.1f} | {t_copy:.1f} | {pc:.1f} | {t_read:.1f} | {pr:.1f} |", flush=True)
    del srcs, dsts, reads
