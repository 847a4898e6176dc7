import re, sys, os, subprocess, tempfile
sys.path.insert(0, os.path.dirname(__file__))
import torch, triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import mangle_type
from qarl_kernels import w4a16_gluon as wg
import w4a16_mma_v2 as v2

bm, bn, st, pers, two = map(int, sys.argv[1:6])
words = torch.empty(16 * 1536, 256, dtype=torch.int32)
x = torch.empty(512, 2048, dtype=torch.bfloat16)
w_desc = TensorDescriptor.from_tensor(words, [bn, wg.STAGE_WORDS], wg._WORD_LAYOUT)
x_desc = TensorDescriptor.from_tensor(x, [bm, wg.HALF], wg._x_layout(bm))
names = ["w_desc", "x_desc", "x_ptr", "s_ptr", "y_ptr", "counts_ptr", "num_experts", "N", "K",
         "stride_xm", "stride_se", "stride_sn", "stride_ym"]
types = [mangle_type(w_desc), mangle_type(x_desc), "*bf16", "*i32", "*bf16", "*i32"] + ["i32"] * 7
sig = dict(zip(names, types))
acc, wl, op = v2.layouts(bn, bm, two)
cx = {"acc_layout": acc, "word_layout": wl, "split_layout": op, "E_PAD": 16, "STAGES": st,
      "PERSISTENT": bool(pers), "TWO_ACC": bool(two), "num_warps": 4}
sig.update({k: "constexpr" for k in cx})
aligned = {(names.index(n), ): [["tt.divisibility", 16]] for n in ("x_ptr", "s_ptr", "y_ptr", "counts_ptr")}
k = triton.compile(GluonASTSource(fn=v2._kernel, signature=sig, constexprs=cx, attrs=aligned),
                   target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
ptx = k.asm["ptx"]
tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
    f.write(k.asm["cubin"]); f.flush()
    sass = subprocess.run([tool, "-c", f.name], capture_output=True, text=True, check=True).stdout
print("shared", k.metadata.shared)
for op_ in ["mma.sync", "ldmatrix", "shfl", "st.shared", "ld.shared", "lop3", "prmt", "bar.sync", "sub.rn.bf16x2", "mul.rn.bf16x2", "cvt"]:
    print(op_, len(re.findall(re.escape(op_), ptx)))
for o in ["HMMA", "LDSM", "SHFL", "STS", "LDS", "LOP3", "HFMA2", "HMUL2", "HADD2", "BAR", "PRMT", "MOV"]:
    print("SASS", o, len(re.findall(r"\b" + o + r"\b", sass)))
open("/tmp/v2.sass", "w").write(sass); open("/tmp/v2.ptx", "w").write(ptx)
