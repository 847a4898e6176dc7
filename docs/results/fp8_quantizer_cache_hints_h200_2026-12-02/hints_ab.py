"""The FP8 activation quantizer with cache hints on its streams, against the kernel as it
stands: x loaded with eviction_policy="evict_first" (ef), the codes stored with
cache_modifier=".cs" (cs, streaming), both. Each variant is kernels/fp8_quantize.py with its
load or store line changed (written beside it as fp8_quantize_<variant>.py on the GPU machine's
copy of the tree). Checked bit for bit against the kernel as it stands, then timed in CUDA
graphs of 10 calls over inputs rotated past L2 (the quantizer alone), and in one-call graphs of
the o_proj call (quantizer + cuBLAS's blockwise scaled_mm) as the bench's FP8 section times it,
beside bf16; variants interleaved, medians of ROUNDS rounds."""
import importlib
import pathlib
import statistics

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import fp8_quantize
from qarl_kernels.bench.measure import copies_for, graph_us
from qarl_kernels.fp8_gemm import fp8_block_matmul, quantize_linear_input

ROUNDS = 5
LOAD = ("                mask=(offs_r[:, None, None] < rows) & (offs_k < K), other=0.0)",
        "                mask=(offs_r[:, None, None] < rows) & (offs_k < K), other=0.0,\n"
        "                eviction_policy=\"evict_first\")")
STORE = ("             mask=out[:, None, None] & (offs_k < K))",
         "             mask=out[:, None, None] & (offs_k < K), cache_modifier=\".cs\")")
VARIANTS = {"ef": [LOAD], "cs": [STORE], "ef+cs": [LOAD, STORE]}


def variant(name, edits):
    src = pathlib.Path(fp8_quantize.__file__).read_text()
    for old, new in edits:
        assert src.count(old) == 1, (name, old)
        src = src.replace(old, new)
    stem = "fp8_quantize_" + name.replace("+", "_")
    pathlib.Path(fp8_quantize.__file__).with_name(stem + ".py").write_text(src)
    return importlib.import_module("qarl_kernels." + stem)


def main():
    print(torch.cuda.get_device_name(), torch.__version__)
    mods = {"now": fp8_quantize, **{k: variant(k, v) for k, v in VARIANTS.items()}}
    names = list(mods)
    print("\n## the quantizer alone (graphs of 10 calls, inputs rotated past L2), us, medians")
    print("| rows x K | " + " | ".join(names) + " | " +
          " | ".join(f"{n} / now" for n in names[1:]) + " |")
    print("|---" * (2 * len(names)) + "|")
    for rows, k in [(4096, 4096), (16384, 4096), (4096, 2048), (16384, 2048), (32768, 2048),
                    (256, 2048)]:
        xs = [torch.randn(rows, k, device="cuda").bfloat16()
              for _ in range(min(copies_for(rows * k * 2), 8))]
        want = fp8_quantize.fp8_quantize_activation(xs[0])
        for n, m in mods.items():
            got = m.fp8_quantize_activation(xs[0])
            assert torch.equal(got[0].view(torch.uint8), want[0].view(torch.uint8)), (n, rows, k)
            assert torch.equal(got[1], want[1]), (n, rows, k)
        rounds = [[graph_us([lambda x=x, m=m: m.fp8_quantize_activation(x) for x in xs],
                            calls=10) for m in mods.values()] for _ in range(ROUNDS)]
        t = [statistics.median(c) for c in zip(*rounds)]
        print(f"| {rows} x {k} | " + " | ".join(f"{v:.2f}" for v in t) + " | " +
              " | ".join(f"{v / t[0]:.3f}" for v in t[1:]) + " |")

    print("\n## the dense call (quantizer + scaled_mm, one-call graphs, one x), us, medians")
    print("| shape | bf16 | " + " | ".join(names) + " | " +
          " | ".join(f"bf16 / {n}" for n in names) + " |")
    print("|---" * (2 + 2 * len(names)) + "|")
    scheme = get_scheme("fp8-block")
    for label, m, n, k in [("o_proj", 4096, 2048, 4096), ("o_proj", 16384, 2048, 4096),
                           ("", 4096, 1536, 2048), ("qkv", 4096, 5120, 2048)]:
        w = torch.randn(n, k, device="cuda")
        qw, wb = scheme.quantize_weight(w), w.bfloat16()
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        pad = quantize_linear_input(x, qw)[0].shape[0]
        calls = {nm: (lambda mod=mod: fp8_block_matmul(
            *mod.fp8_quantize_activation(x, pad_rows_to=4 if pad > m else 1), qw))
            for nm, mod in mods.items()}
        base = calls["now"]()
        for nm, fn in calls.items():
            assert torch.equal(fn(), base), nm
        fns = [lambda: x @ wb.t(), *calls.values()]
        rounds = [[graph_us([fn]) for fn in fns] for _ in range(ROUNDS)]
        t = [statistics.median(c) for c in zip(*rounds)]
        print(f"| {label} {m}x{n}x{k} | " + " | ".join(f"{v:.1f}" for v in t) + " | " +
              " | ".join(f"{t[0] / v:.3f}" for v in t[1:]) + " |")


if __name__ == "__main__":
    main()
