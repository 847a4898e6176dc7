"""Session 58, offline (the CPU machine, Triton 3.6 with its ptxas and nvdisasm for sm_90): the
static SASS of this file's W4A16 kernel as w4a16_gemm.dense_config builds it for one token
(`cuda_core_sass.py 1 8 1024 4 1`) and as the MMA tiles of two tokens (`16 64 128 4 0`):
instruction counts a thread by opcode. Usage: PYTHONPATH=<triton 3.6>:<dir with qarl_kernels>:<repo>
python cuda_core_sass.py BLOCK_M BLOCK_N BLOCK_K WARPS CUDA_CORES"""
import re, sys, subprocess, tempfile, os
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from qarl_kernels import w4a16_gemm as g
names = ["x_ptr", "w_ptr", "s_ptr", "y_ptr", "counts_ptr", "p_ptr", "partials_ptr", "counters_ptr",
         "num_experts", "total_rows", "N", "K", "stride_xm", "stride_we", "stride_wn", "stride_se",
         "stride_sn", "stride_ym"]
types = ["*bf16", "*i32", "*i32", "*bf16", "*i32", "*bf16", "*fp32", "*i32"] + ["i32"] * 10
bm, bn, bk, w, cc = (int(a) for a in sys.argv[1:6])
constexprs = dict(GROUP=128, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, E_PAD=1, DENSE=True, SPLIT_K=1,
                  EVEN_K=True, SCALE_PAIRS=(bk // 128) % 2 == 0, SWIGLU=False, HAS_PROBS=False, ROW_LOOP=False,
                  CUDA_CORES=bool(cc), SOFTWARE=False)
if not constexprs["SCALE_PAIRS"]:  # the scales as bf16, not as int32 pairs
    types[2] = "*bf16"
sig = dict(zip(names, types)); sig.update({k: "constexpr" for k in constexprs})
aligned = {(names.index(n),): [["tt.divisibility", 16]] for n in ["x_ptr", "w_ptr", "s_ptr", "y_ptr", "K", "stride_xm", "stride_wn", "stride_ym"]}
k = triton.compile(ASTSource(fn=g._w4a16_gemm_kernel, signature=sig, constexprs=constexprs, attrs=aligned),
                   target=GPUTarget("cuda", 90, 32), options={"num_warps": w, "num_stages": 3})
cubin = k.asm["cubin"]
with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
    f.write(cubin)
from triton.backends.nvidia.compiler import get_ptxas
nvdisasm = "/tmp/t36site/triton/backends/nvidia/bin/nvdisasm"
sass = subprocess.run([nvdisasm, "-c", f.name], capture_output=True, text=True).stdout
ins = [l for l in sass.splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/", l)]
ops = {}
for l in ins:
    m = re.search(r"\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", l)
    if m:
        op = m.group(1).split(".")[0]; ops[op] = ops.get(op, 0) + 1
print(f"cfg bm{bm} bn{bn} bk{bk} w{w} cc{cc}: {len(ins)} SASS instructions a thread (static)")
print(sorted(ops.items(), key=lambda kv: -kv[1])[:18])
values = bn * bk // (32 * w)  # weight values a thread per K step
print(f"weight values a thread a K step: {values}; K steps at K=2048: {2048 // bk}")
