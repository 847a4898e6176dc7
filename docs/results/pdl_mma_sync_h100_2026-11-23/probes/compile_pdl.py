import sys, os, re
sys.path.insert(0, os.path.dirname(__file__))
import torch, triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import mangle_type
import _w4g_pdl as wg
bm, bn, st, pers, pdl, pf = map(int, sys.argv[1:7])
words = torch.empty(16 * 1536, 256, dtype=torch.int32)
x = torch.empty(512, 2048, dtype=torch.bfloat16)
w_desc = TensorDescriptor.from_tensor(words, [bn, wg.STAGE_WORDS], wg._WORD_LAYOUT)
x_desc = TensorDescriptor.from_tensor(x, [bm, wg.HALF], wg._x_layout(bm))
names = ["w_desc", "w_ptr", "x_desc", "x_ptr", "s_ptr", "y_ptr", "p_ptr", "counts_ptr", "num_experts",
         "N", "K", "stride_xm", "stride_se", "stride_sn", "stride_ym"]
types = [mangle_type(w_desc), "*i32", mangle_type(x_desc), "*bf16", "*i32", "*bf16", "*fp32", "*i32"] + ["i32"] * 7
sig = dict(zip(names, types))
acc, wl, op = wg._layouts(bn, bm)
cx = {"acc_layout": acc, "word_layout": wl, "split_layout": op, "E_PAD": 16, "STAGES": st,
      "SWIGLU": False, "HAS_PROBS": False, "PERSISTENT": bool(pers), "X_ASYNC": False,
      "PDL": bool(pdl), "PF_LINES": pf, "num_warps": 4}
sig.update({k: "constexpr" for k in cx})
k = triton.compile(GluonASTSource(fn=wg._w4a16_gluon_kernel, signature=sig, constexprs=cx),
                   target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "launch_pdl": bool(pdl)})
ptx = k.asm["ptx"]
for o in ["griddepcontrol", "prefetch.global.L2", "wgmma.mma_async", "cp.async.bulk.tensor"]:
    print(o, len(re.findall(re.escape(o), ptx)))
print("launch_pdl", k.metadata.launch_pdl, "shared", k.metadata.shared)
