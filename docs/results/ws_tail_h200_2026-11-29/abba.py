"""Session 44: grad_input's kernel before (A), the final kernel built without the short tiles'
m64 blocks (B: the same PTX as A with Triton 3.9 offline) and with them (C), timed in the order
A B C C B A twice (each position as often first as last), medians of 4, at 512-1024 rows an
expert: calls 2-7's 1.01-1.08x there came from tail.py's order (in 2 of its 3 rounds the
kernel before ran first) or from the kernel."""
import statistics
import time

import torch

import ws_before as old  # this folder's copy of the kernel before
from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_grouped_ws as new
from qarl_kernels.bench import _batch, _w4a16_weights
from qarl_kernels.bench_setup import median_us

CELLS = [("W13 E128", 128, 1536, 2048, 16384), ("W2 E128", 128, 2048, 768, 8192)]


def main():
    scheme = get_scheme("w4a16")
    for label, e, n, k, m in CELLS:
        qws, _ = _w4a16_weights(scheme, e, n, k)
        counts, rows, _, _, _ = _batch(m, e, k)
        g = torch.randn(rows, n, device="cuda", dtype=torch.bfloat16)

        def timed(short):
            if short is not None:
                new.GRAD_SHORT_TILES_ROWS_PER_EXPERT = 10**9 if short else 0
                return median_us([lambda q=q: new.w4a16_grouped_ws_grad_input(g, q, counts)
                                  for q in qws])
            return median_us([lambda q=q: old.w4a16_grouped_ws_grad_input(g, q, counts)
                              for q in qws])

        kernels = {"A before": None, "B final, no short tiles": False, "C final, short tiles": True}
        times = {name: [] for name in kernels}
        for name in (list(kernels) + list(reversed(kernels))) * 2:
            times[name].append(timed(kernels[name]))
        med = {name: statistics.median(t) for name, t in times.items()}
        print(f"{label} M={m} ({rows // e} rows an expert) grad_input us, medians of 4 "
              "(ABCCBA x2): "
              + ", ".join(f"{name} {med[name]:.1f} ({', '.join(f'{v:.1f}' for v in times[name])})"
                          for name in kernels)
              + f" | B/A {med['B final, no short tiles'] / med['A before']:.3f}, "
              f"C/A {med['C final, short tiles'] / med['A before']:.3f}", flush=True)
        del qws


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S"), flush=True)
    main()
