"""Session 57, offline (no GPU): the SASS of the activation quantizer (fp8_quantize's
_fp8_activation_kernel, 16-row programs of 4 warps, bf16 values, one and two 128-input blocks)
as Triton 3.6's ptxas (the GPU machine's) builds it for sm_90: instructions a thread over the
values each thread quantizes, to price a quantizer inside the GEMM's tiles. Static counts (every
path of the program once). Usage: PYTHONPATH=<triton 3.6 site>:<dir with qarl_kernels>:. python
quant_sass.py"""
import os, subprocess, tempfile, collections, re
import triton
from triton.backends.compiler import GPUTarget
from qarl_kernels.fp8_quantize import _fp8_activation_kernel
sig = {"x_ptr": "*bf16", "q_ptr": "*fp8e4nv", "s_ptr": "*fp32", "counts_ptr": "*i32",
       "num_experts": "i32", "rows": "i32", "rows_out": "i32", "K": "i32", "stride_xm": "i32",
       "stride_qm": "i32", "stride_sm": "i32", "stride_sk": "i32",
       "BLOCK_R": "constexpr", "BLOCKS": "constexpr", "BLOCK": "constexpr", "E_PAD": "constexpr",
       "ROUTED": "constexpr"}
for blocks in (1, 2):
    consts = {"BLOCK_R": 16, "BLOCKS": blocks, "BLOCK": 128, "E_PAD": 1, "ROUTED": False}
    src = triton.compiler.ASTSource(_fp8_activation_kernel, sig, consts)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(k.asm["cubin"]); f.flush()
        sass = subprocess.run([tool, "-c", f.name], capture_output=True, text=True, check=True).stdout
    ins = [l for l in sass.splitlines() if re.match(r"\s+/\*[0-9a-f]+\*/\s+\S", l)]
    ops = collections.Counter(re.sub(r"^\s+/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?", "", l).split()[0].split(".")[0].rstrip(";") for l in ins)
    ops.pop("NOP", None)
    total = sum(ops.values())
    elems = 16 * 128 * blocks
    print(f"BLOCKS={blocks}: {total} SASS instructions a thread for {elems} values over 128 "
          f"threads: {total * 128 / elems:.1f} a value")
    print("  ", ops.most_common(14))
