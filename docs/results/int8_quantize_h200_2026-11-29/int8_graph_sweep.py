"""Session 53: this tree's INT8 row quantizer timed in CUDA graphs of 10 calls (no host launch
in the time: call 2's do_bench read 30-50 us calls and the in-place masters at the host's
pace), its row's block (ONE_PASS_K: 256-2048 values; a row wider than its block, or not a
multiple of it, is read twice) and bytes a thread (THREAD_BYTES: 16-64) swept, on
activations, the SwiGLU rows and one Qwen3-30B-A3B layer's experts; every output checked bit
for bit against 624b5f4's kernel (`qarl_kernels_old`), which is timed the same way. Inputs
rotate over copies past 2x L2. us a call (% of copy bandwidth: bytes read and written). Then
the host time of master_table for 128 in-place masters.
Usage: int8_graph_sweep.py (PYTHONPATH holds qarl_kernels and qarl_kernels_old)"""
import time

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import int8_quantize as new
from qarl_kernels.bench_setup import copies_for, graph_us
from qarl_kernels.expert_masters import master_table
from qarl_kernels_old import int8_quantize as old

BLOCKS = (256, 512, 1024, 2048)
THREAD_BYTES = (16, 32, 64)


def copy_gbps():
    a = torch.empty(1 << 28, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    return 2 * a.numel() / graph_us([lambda: b.copy_(a)], replays=20, calls=10) / 1e3


def pair(out):
    return (out.data, out.scale) if hasattr(out, "data") else out


def sweep(label, f_old, f_new, inputs, gbytes, copy):
    want = pair(f_old(*inputs[0]))
    t = graph_us([lambda a=a: f_old(*a) for a in inputs], replays=40, calls=10)
    cells = [f"old {t:.1f} ({100 * gbytes / copy / t:.1f}%)"]
    best = (t, "old")
    for block in BLOCKS:
        for tb in THREAD_BYTES:
            if block == 256 and tb != 64:
                continue  # one warp either way
            new.ONE_PASS_K, new.THREAD_BYTES = block, tb
            got = pair(f_new(*inputs[0]))
            assert all(torch.equal(x, y) for x, y in zip(want, got)), (label, block, tb)
            t = graph_us([lambda a=a: f_new(*a) for a in inputs], replays=40, calls=10)
            cells.append(f"{block}/{tb}B {t:.1f} ({100 * gbytes / copy / t:.1f}%)")
            best = min(best, (t, f"{block}/{tb}B"))
    new.ONE_PASS_K, new.THREAD_BYTES = 2048, 64
    print(f"{label}: best {best[1]} {best[0]:.1f}; {', '.join(cells)}", flush=True)


def main():
    scheme = get_scheme("int8")
    copy = copy_gbps()
    print(torch.cuda.get_device_name(), f"copy {copy:.0f} GB/s; us a call (% of copy)",
          flush=True)
    for m, k in [(16384, 2048), (65536, 2048), (32768, 768), (16384, 1536), (8192, 4096),
                 (256, 2048), (256, 768), (8, 2048)]:
        inputs = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16),)
                  for _ in range(copies_for(m * k * 2))]
        sweep(f"activations {m} x {k}", old.int8_quantize_activation,
              new.int8_quantize_activation, inputs, m * k * 3 / 1e3, copy)
    for m in (32768, 256):
        inputs = [(torch.randn(m, 1536, device="cuda", dtype=torch.bfloat16),
                   torch.rand(m, device="cuda")) for _ in range(copies_for(m * 1536 * 2))]
        sweep(f"swiglu rows {m} x 768", old.int8_quantize_swiglu, new.int8_quantize_swiglu,
              inputs, m * (1536 * 2 + 768) / 1e3, copy)
    for label, (e, n, k) in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
        torch.manual_seed(0)
        masters = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
                   for _ in range(e)]
        for name, w, size in [("bf16 in place", masters, 2),
                              ("bf16 stacked", torch.stack(masters), 2),
                              ("fp32 stacked", torch.stack(masters).float(), 4)]:
            sweep(f"weights {label} {name}",
                  lambda w_: old.int8_quantize(w_, scheme, check_finite=False),
                  lambda w_: new.int8_quantize(w_, scheme, check_finite=False), [(w,)],
                  e * n * k * (size + 1) / 1e3, copy)
        start = time.perf_counter()
        for _ in range(100):
            master_table(masters)
        print(f"master_table of {e} in-place masters: "
              f"{(time.perf_counter() - start) * 1e4:.1f} us of host time a call", flush=True)
        del masters


if __name__ == "__main__":
    main()
