"""How far SGLang's SwiGLU (sgl-kernel's silu_and_mul: silu(g) = g / (1.0f + __expf(-g)),
times up in fp32, one bf16 rounding; its SM90 library built with -use_fast_math) is from the
learner's (quant.ops.reference_gated_activation: torch's silu, IEEE, times up, one rounding).
A kernel with that arithmetic (written here) is compiled by NVRTC with --use_fast_math and run
over every finite bf16 gate value against random bf16 up values."""
import ctypes

import torch

from megatron_qarl.quant.ops import reference_gated_activation
from probe import _nvrtc

SOURCE = rb"""
extern "C" __global__ void swiglu(const unsigned short* g, const unsigned short* u,
                                  unsigned short* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float gate = __uint_as_float((unsigned)g[i] << 16), up = __uint_as_float((unsigned)u[i] << 16);
  float v = gate / (1.0f + __expf(-gate)) * up;
  unsigned short r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(v));
  out[i] = r;
}
"""


def main():
    nv = _nvrtc()
    prog = ctypes.c_void_p()
    assert nv.nvrtcCreateProgram(ctypes.byref(prog), SOURCE, b"s.cu", 0, None, None) == 0
    major, minor = torch.cuda.get_device_capability()
    opts = [f"--gpu-architecture=compute_{major}{minor}".encode(), b"--use_fast_math"]
    assert nv.nvrtcCompileProgram(prog, 2, (ctypes.c_char_p * 2)(*opts)) == 0
    n = ctypes.c_size_t()
    nv.nvrtcGetPTXSize(prog, ctypes.byref(n))
    ptx = ctypes.create_string_buffer(n.value)
    nv.nvrtcGetPTX(prog, ptx)
    print("PTX:", [l.strip() for l in ptx.value.decode().splitlines()
                   if any(t in l for t in ("ex2", "div", "rcp", "mul.", "add.", "cvt.rn.bf16"))])
    torch.zeros(1, device="cuda")  # the primary context the module loads into
    cu = ctypes.CDLL("libcuda.so.1")
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    assert cu.cuModuleLoadData(ctypes.byref(mod), ptx.value) == 0
    assert cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"swiglu") == 0
    gates = torch.arange(-0x7F80, 0x7F80, dtype=torch.int32)
    gates = gates[(gates & 0x7FFF) < 0x7F80].to(torch.int16).view(torch.bfloat16)  # finite
    torch.manual_seed(0)
    for label, ups in [("up ~ randn", 64), ("up = 1", 1)]:
        g = gates.repeat(ups)
        u = torch.randn(g.numel()).bfloat16() if ups > 1 else torch.ones_like(g)
        gd, ud = g.cuda().view(torch.int16), u.cuda().view(torch.int16)
        out = torch.empty_like(gd)
        args = [ctypes.c_void_p(gd.data_ptr()), ctypes.c_void_p(ud.data_ptr()),
                ctypes.c_void_p(out.data_ptr()), ctypes.c_int(g.numel())]
        params = (ctypes.c_void_p * 4)(*[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p)
                                        for a in args])
        assert cu.cuLaunchKernel(fn, (g.numel() + 255) // 256, 1, 1, 256, 1, 1, 0, None, params,
                                 None) == 0
        torch.cuda.synchronize()
        sgl = out.cpu().view(torch.bfloat16)
        ours = reference_gated_activation(torch.stack([g, u], -1).view(-1, 2))[:, 0]
        differ = sgl.view(torch.int16) != ours.view(torch.int16)
        ulps = (sgl.view(torch.int16).int() - ours.view(torch.int16).int())[differ].abs()
        big = (g.float().abs() < 88) & (g.float().abs() > 2.0 ** -10)
        print(f"{label}: {int(differ.sum())} of {g.numel()} bf16 outputs differ "
              f"({100 * differ.float().mean().item():.4f}%; gates in (2^-10, 88): "
              f"{int((differ & big).sum())} of {int(big.sum())}), by {sorted(set(ulps.tolist()))[:5]} "
              f"ulps; first gates: {g[differ][:5].tolist()}")


if __name__ == "__main__":
    main()
