"""Session 61: the INT8 activation quantizer reads a row twice past int8_quantize.ONE_PASS_K
(2048) inputs, so o_proj's rows of 4096 take two passes: at decode sizes it cost 2.4-3.2 us
against 1.4-2.3 at K=2048 (call 1). Here one pass up to 4096 / 8192 against two: the
quantizer alone and the INT8 op at o_proj (2048x4096), 1-4096 tokens; CUDA graphs of 10 calls,
o_proj's weights rotated past L2, ROUNDS interleaved rounds, medians; codes and scales compared
bit for bit. Usage: int8_one_pass.py [ROUNDS]"""
import statistics
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import int8_quantize
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.int8_gemm import int8_linear
from qarl_kernels.int8_quantize import int8_quantize_activation

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
N, K = 2048, 4096
SETTINGS = (2048, 4096, 8192)


def timed(setting, fns):
    int8_quantize.ONE_PASS_K = setting
    return graph_us(fns, calls=STEP_CALLS)


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    scheme = get_scheme("int8")
    qws = [scheme.quantize_weight(torch.randn(N, K, device="cuda") * 0.02)
           for _ in range(copies_for(N * K))]
    for m in (1, 8, 16, 64, 128, 256, 512, 4096):
        x = torch.randn(m, K, device="cuda", dtype=torch.bfloat16) * 3
        outs = {}
        for s in SETTINGS:
            int8_quantize.ONE_PASS_K = s
            outs[s] = int8_quantize_activation(x)
        same = all(torch.equal(outs[s][0], outs[2048][0]) and torch.equal(outs[s][1], outs[2048][1])
                   for s in SETTINGS)
        runs = [{(arm, s): timed(s, fns) for s in SETTINGS for arm, fns in (
            ("quant", [lambda: int8_quantize_activation(x)]),
            ("op", [lambda q=q: int8_linear(x, q) for q in qws]))} for _ in range(ROUNDS)]
        med = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        print(f"o_proj {m}x{N}x{K}: bit for bit {same}; " + "; ".join(
            f"{arm} " + ", ".join(f"one pass to {s}: {med[(arm, s)]:.2f} us "
                                  f"({med[(arm, 2048)] / med[(arm, s)]:.2f}x)" for s in SETTINGS)
            for arm in ("quant", "op")), flush=True)
    int8_quantize.ONE_PASS_K = 2048


if __name__ == "__main__":
    main()
