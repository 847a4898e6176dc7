"""Stream-only floor of each decode row: a TMA kernel that only streams the touched experts'
int4 words (the Gluon kernel's boxes, 4 stages), against the W4A16 op, 10 calls per graph."""
import sys
import torch
sys.path.insert(0, ".gpu")
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from qarl_kernels.bench_setup import graph_us, route, copies_for, ceilings
import stream_probe

CALLS = 10  # calls per captured graph



def main():
    ceil = ceilings()["copy_GBps"]
    print(f"copy {ceil:.0f} GB/s", flush=True)
    for label, e, n, k in (("W13 E128", 128, 1536, 2048), ("W2 E128", 128, 2048, 768),
                           ("W13 EP8", 16, 1536, 2048), ("W2 EP8", 16, 2048, 768)):
        for m in (1, 8, 64, 256):
            touched = int((route(m, e, 8) > 0).sum())
            words = k // 8
            nbytes = touched * n * words * 4
            ws = [torch.randint(-2**31, 2**31 - 1, (touched * n, words), dtype=torch.int32,
                                device="cuda") for _ in range(copies_for(nbytes))]
            out = torch.empty(touched * n // 64, dtype=torch.int32, device="cuda")
            counts = torch.zeros(16, dtype=torch.int32, device="cuda")
            res = []
            for bn, st in ((64, 4), (128, 4)):
                descs = [TensorDescriptor.from_tensor(w, [bn, 16], stream_probe.LAYOUT) for w in ws]
                grid = touched * n // bn
                t = graph_us([lambda d=d: stream_probe.stream_kernel[(grid, )](
                    d, out, grid, counts, KB=words // 16, STAGES=st, TILED=False, TABLES=False,
                    num_warps=4) for d in descs], calls=CALLS)
                res.append(t)
            t = min(res)
            print(f"{label} M={m}: {touched} experts, {nbytes / 1e6:.1f} MB int4 words: stream "
                  f"floor {t:.1f} us ({100 * nbytes / t / 1e3 / ceil:.1f}% of copy)", flush=True)
            del ws


if __name__ == "__main__":
    main()
