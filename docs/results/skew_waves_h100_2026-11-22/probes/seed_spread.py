"""The op (w4a16_grouped_matmul, routed tiles) over 4 routing seeds, uniform and skewed, at
every decode shape: is the table's single seed representative? Graphs of 10 calls."""
import torch

from qarl_kernels.bench import DECODE_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul, w4a16_grouped_swiglu
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme

scheme = get_scheme("w4a16")
for label, e, n, k in DECODE_SHAPES:
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    for m in (8, 64, 128, 256):
        for skew in (0.0, 0.5):
            gemm, fused = [], []
            for seed in range(4):
                counts = route(m, e, TOP_K, seed=seed, skew=skew)
                x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
                probs = torch.rand(x.shape[0], device="cuda")
                w4a16_grouped_matmul(x, q0, counts)  # lane codes made outside capture
                gemm.append(graph_us([lambda q=q: w4a16_grouped_matmul(x, q, counts)
                                      for q in qws], calls=STEP_CALLS))
                if label.startswith("W13"):
                    fused.append(graph_us([lambda q=q: w4a16_grouped_swiglu(x, q, counts, probs)
                                           for q in qws], calls=STEP_CALLS))
            line = f"{label} M={m} skew {skew}: GEMM " + " ".join(f"{t:.1f}" for t in gemm)
            line += f" (max/min {max(gemm) / min(gemm):.2f})"
            if fused:
                line += "; fused " + " ".join(f"{t:.1f}" for t in fused)
                line += f" (max/min {max(fused) / min(fused):.2f})"
            print(line, flush=True)
    del qws
