"""Offline sm_90a build of the w4a16_unpack_ws probe: registers, and the PTX around the arrivals."""
import os, re, subprocess, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch, triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import mangle_type
import w4a16_unpack_ws as ws
from qarl_kernels import w4a16_gluon as wg

bm, bn, st, ur = map(int, sys.argv[1:5])
words = torch.empty(16 * 1536, 256, dtype=torch.int32)
x = torch.empty(512, 2048, dtype=torch.bfloat16)
w_desc = TensorDescriptor.from_tensor(words, [bn, wg.STAGE_WORDS], wg._WORD_LAYOUT)
x_desc = TensorDescriptor.from_tensor(x, [bm, wg.HALF], wg._x_layout(bm))
names = ["w_desc", "x_desc", "x_ptr", "s_ptr", "y_ptr", "counts_ptr", "num_experts", "N", "K",
         "stride_xm", "stride_se", "stride_sn", "stride_ym"]
types = [mangle_type(w_desc), mangle_type(x_desc), "*bf16", "*i32", "*bf16", "*i32"] + ["i32"] * 7
sig = dict(zip(names, types))
ws._LAYOUTS[(bn, bm)] = wg._layouts(bn, bm)
cx = {"E_PAD": 16, "STAGES": st,
      "UNPACK_REGS": ur, "MODE_KEY": ws.MODE, "num_warps": 4}
sig.update({k: "constexpr" for k in cx})
attrs = {(names.index(n), ): [["tt.divisibility", 16]] for n in ("x_ptr", "s_ptr", "y_ptr", "counts_ptr")}
k = triton.compile(GluonASTSource(fn=ws._ws_kernel, signature=sig, constexprs=cx, attrs=attrs),
                   target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
d = os.path.dirname(triton.__file__) + "/backends/nvidia/bin/"
with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
    f.write(k.asm["cubin"]); f.flush()
    print(subprocess.run([d + "cuobjdump", "-res-usage", f.name], capture_output=True, text=True).stdout.strip().splitlines()[-1])
ptx = k.asm["ptx"]
print("shared", k.metadata.shared, "wgmma", len(re.findall(r"wgmma\.mma_async", ptx)),
      "bar.sync/named", re.findall(r"bar\.sync[^;]*", ptx)[:8], "arrive", len(re.findall(r"mbarrier\.arrive", ptx)),
      "stmatrix", len(re.findall(r"stmatrix", ptx)), "st.shared", len(re.findall(r"st\.shared", ptx)))
