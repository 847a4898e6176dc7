"""Session 54, call 6: the FP8 ops with the activation quantizer inside the call, round 49's
kernels (`qarl_kernels_old`) against this tree's, each beside bf16, seven rounds alternating
old, new and bf16 in CUDA graphs of one call (as `bench --only fp8` times them), medians:
the grouped GEMM at EP8 and E128 (W13, W2) and the attention projections, at 4096 and 16384
tokens. Outputs bit for bit first. Usage: fp8_op_ab.py (PYTHONPATH holds qarl_kernels and
qarl_kernels_old)"""
import statistics

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import fp8_gemm as new
from qarl_kernels.bench import GROUPED_SHAPES, TOP_K
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels_old import fp8_gemm as old

ROUNDS = 7


def ab(label, f_old, f_new, f_bf16):
    assert torch.equal(f_old(), f_new()), label
    rounds = [[graph_us([fn]) for fn in (f_old, f_new, f_bf16)] for _ in range(ROUNDS)]
    t_old, t_new, t_bf16 = (statistics.median(c) for c in zip(*rounds))
    print(f"{label}: old {t_old:.1f} us ({t_bf16 / t_old:.2f}x bf16), new {t_new:.1f} us "
          f"({t_bf16 / t_new:.2f}x bf16), bf16 {t_bf16:.1f} us, new/old {t_new / t_old:.3f}; "
          f"new's speedup by round {' '.join(f'{r[2] / r[1]:.2f}' for r in rounds)}",
          flush=True)


def main():
    print(torch.cuda.get_device_name(), flush=True)
    scheme = get_scheme("fp8-block")
    for label, e, n, k in GROUPED_SHAPES[:4]:
        w = torch.randn(e, n, k, device="cuda")
        qw, wb = scheme.quantize_weight(w), w.bfloat16().transpose(1, 2)
        for m in (4096, 16384):
            counts = route(m, e, TOP_K)
            x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
            offs = torch.cumsum(counts, 0, dtype=torch.int32)
            ab(f"grouped {label} M={m}", lambda: old.fp8_block_grouped_linear(x, qw, counts),
               lambda: new.fp8_block_grouped_linear(x, qw, counts),
               lambda: torch._grouped_mm(x, wb, offs=offs))
    for label, n, k in [("qkv", 5120, 2048), ("o_proj", 2048, 4096)]:
        w = torch.randn(n, k, device="cuda")
        qw, wb = scheme.quantize_weight(w), w.bfloat16()
        for m in (4096, 16384):
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            ab(f"dense {label} {m}x{n}x{k}", lambda: old.fp8_block_linear(x, qw),
               lambda: new.fp8_block_linear(x, qw), lambda: x @ wb.t())


if __name__ == "__main__":
    main()
