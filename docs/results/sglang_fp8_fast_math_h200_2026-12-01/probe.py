"""What sgl-kernel's SM90 FP8 activation quantizer computes, run on the GPU, against the
learner's spec and candidate formulas.

sgl-kernel's `per_token_group_quant_8bit` (its SM90 library is built with -use_fast_math):
amax = max(1e-10, max|x|) over 128 inputs, scale_inv = amax * fp32(1/448),
scale = 448.f / amax, codes = e4m3_satfinite(__fmul_rn(x, scale)). Part 1 compiles a kernel
with that arithmetic (written here, not SGLang's source) with NVRTC and --use_fast_math, prints
the PTX of the division, and runs it through the driver API. Part 2 takes the hardware's
div.approx.ftz.f32 / rcp.approx.ftz.f32 (Triton inline PTX) over every positive normal bf16
value and against IEEE formulas. Part 3 compares the codes of part 1's kernel with the
learner's former spec (a division by the scale), with e4m3(x * fp32(448 * fp32(1 / amax)))
and with the learner's quantize_activation, all computed on the CPU."""
import ctypes
import glob
import os
import sys

import torch
import triton
import triton.language as tl

from megatron_qarl.quant import fp8_block

SOURCE = rb"""
extern "C" __global__ void quantize(const unsigned short* x, unsigned char* q, float* s,
                                    int groups) {
  int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= groups) return;
  const unsigned short* row = x + (long)g * 128;
  float amax = 1e-10f;
  for (int i = 0; i < 128; ++i) amax = fmaxf(amax, fabsf(__uint_as_float((unsigned)row[i] << 16)));
  float scale = 448.0f / amax;
  s[g] = amax * (1.0f / 448.0f);
  for (int i = 0; i < 128; i += 2) {
    float a = __fmul_rn(__uint_as_float((unsigned)row[i] << 16), scale);
    float b = __fmul_rn(__uint_as_float((unsigned)row[i + 1] << 16), scale);
    unsigned short pair;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(b), "f"(a));
    *(unsigned short*)(q + (long)g * 128 + i) = pair;
  }
}
"""


def _nvrtc():
    roots = [os.path.dirname(p) for p in sys.path if p] + ["/usr/local/cuda/lib64"]
    hits = sorted({h for r in roots for h in glob.glob(os.path.join(r, "**", "libnvrtc.so*"),
                                                       recursive=True)
                   if not any(t in h for t in ("builtins", "alt", "stubs"))})
    print("libnvrtc:", hits)
    return ctypes.CDLL(hits[0])


def compile_ptx(options):
    nv = _nvrtc()
    prog = ctypes.c_void_p()
    assert nv.nvrtcCreateProgram(ctypes.byref(prog), SOURCE, b"q.cu", 0, None, None) == 0
    opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
    rc = nv.nvrtcCompileProgram(prog, len(options), opts)
    n = ctypes.c_size_t()
    nv.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(n.value)
    nv.nvrtcGetProgramLog(prog, log)
    assert rc == 0, log.value.decode()
    nv.nvrtcGetPTXSize(prog, ctypes.byref(n))
    ptx = ctypes.create_string_buffer(n.value)
    nv.nvrtcGetPTX(prog, ptx)
    return ptx.value


def run_nvrtc_kernel(ptx, x):
    cu = ctypes.CDLL("libcuda.so.1")
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    assert cu.cuModuleLoadData(ctypes.byref(mod), ptx) == 0
    assert cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"quantize") == 0
    groups = x.numel() // 128
    q = torch.empty(x.shape, dtype=torch.uint8, device="cuda")
    s = torch.empty(groups, device="cuda")
    args = [ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(q.data_ptr()),
            ctypes.c_void_p(s.data_ptr()), ctypes.c_int(groups)]
    params = (ctypes.c_void_p * len(args))(*[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p)
                                              for a in args])
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    assert cu.cuLaunchKernel(fn, (groups + 127) // 128, 1, 1, 128, 1, 1, 0, stream, params,
                             None) == 0
    torch.cuda.synchronize()
    return q.cpu(), s.cpu().view(*x.shape[:-1], -1)


@triton.jit
def _approx(x_ptr, rcp_ptr, div_ptr, full_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    rcp = tl.inline_asm_elementwise("rcp.approx.ftz.f32 $0, $1;", "=r,r", [x], dtype=tl.float32,
                                    is_pure=True, pack=1)
    div = tl.inline_asm_elementwise("div.approx.ftz.f32 $0, $1, $2;", "=r,r,r",
                                    [tl.full([BLOCK], 448.0, tl.float32), x], dtype=tl.float32,
                                    is_pure=True, pack=1)
    tl.store(rcp_ptr + offs, rcp, mask=offs < n)
    tl.store(div_ptr + offs, div, mask=offs < n)
    tl.store(full_ptr + offs, 448.0 / x, mask=offs < n)


def approx(x):
    xg = x.cuda()
    outs = [torch.empty_like(xg) for _ in range(3)]
    _approx[(triton.cdiv(x.numel(), 1024),)](xg, *outs, x.numel(), BLOCK=1024)
    return [o.cpu() for o in outs]


def bits(t):
    return t.view(torch.int32)


def candidate(x):
    """e4m3(x * fp32(448 * fp32(1 / amax))), scale_inv as the learner's, on the CPU."""
    g = x.float().reshape(*x.shape[:-1], -1, 128)
    amax = g.abs().amax(-1).clamp(min=1e-10)
    mult = 448.0 * (1.0 / amax)
    q = (g * mult.unsqueeze(-1)).clamp(-448, 448).to(torch.float8_e4m3fn)
    return q.reshape(x.shape), amax * fp8_block.INV_FP8_MAX


def division(x):
    """e4m3(x / scale_inv), scale_inv = amax * fp32(1/448): the learner's spec to 2026-12-01."""
    g = x.float().reshape(*x.shape[:-1], -1, 128)
    scale = g.abs().amax(-1).clamp(min=1e-10) * fp8_block.INV_FP8_MAX
    q = (g / scale.unsqueeze(-1)).clamp(-448, 448).to(torch.float8_e4m3fn)
    return q.reshape(x.shape), scale


def main():
    print(torch.cuda.get_device_name(), torch.__version__, triton.__version__)
    # Part 1: the quantizer through NVRTC with --use_fast_math
    major, minor = torch.cuda.get_device_capability()
    ptx = compile_ptx([f"--gpu-architecture=compute_{major}{minor}", "--use_fast_math"])
    print("PTX (fast math):", [l.strip() for l in ptx.decode().splitlines()
                               if any(t in l for t in ("div", "rcp", "mul.", "cvt.rn.sat"))])
    # Part 2: the hardware's approximate reciprocal and division over every positive normal bf16
    e = torch.arange(1, 255, dtype=torch.int32)[:, None]
    m = torch.arange(128, dtype=torch.int32)[None, :]
    vals = ((e << 23) | (m << 16)).view(torch.float32).flatten()
    vals = torch.cat([vals, torch.tensor([1e-10])])
    rcp, div, full = approx(vals)
    ieee_rcp = 1.0 / vals
    two_step = 448.0 * ieee_rcp
    one_step = 448.0 / vals
    normal = (ieee_rcp.abs() >= 2.0 ** -126)
    print(f"bf16 values {vals.numel()} (results normal {int(normal.sum())}):")
    for name, a, b in [("rcp.approx.ftz vs fp32(1/a)", rcp, ieee_rcp),
                       ("div.approx.ftz(448, a) vs fp32(448 * fp32(1/a))", div, two_step),
                       ("div.approx.ftz(448, a) vs fp32(448 / a)", div, one_step),
                       ("div.full(448, a) vs fp32(448 / a)", full, one_step),
                       ("div.approx.ftz(448, a) vs rcp.approx * 448 on the CPU", div, 448.0 * rcp)]:
        d = bits(a) != bits(b)
        print(f"  {name}: differ {int(d.sum())} (normal results {int((d & normal).sum())});"
              f" first: {[(v.item(), x.item(), y.item()) for v, x, y in zip(vals[d][:3], a[d][:3], b[d][:3])]}")
    g = torch.Generator().manual_seed(0)
    rnd = (torch.randint(1 << 23, (1 << 20,), generator=g, dtype=torch.int32)
           | (torch.randint(64, 190, (1 << 20,), generator=g, dtype=torch.int32) << 23)
           ).view(torch.float32)
    rcp_r, div_r, _ = approx(rnd)
    print(f"random fp32 values {rnd.numel()}: rcp.approx vs fp32(1/a) differ "
          f"{int((bits(rcp_r) != bits(1.0 / rnd)).sum())}; div.approx(448, a) vs "
          f"fp32(448 * fp32(1/a)) differ {int((bits(div_r) != bits(448.0 * (1.0 / rnd))).sum())}")
    # Part 3: whole quantizers on activations
    torch.manual_seed(0)
    T, K = 8192, 2048
    cases = {"randn x U(0,4) per token": torch.randn(T, K) * torch.rand(T, 1) * 4,
             "randn x exp(2 randn) per token": torch.randn(T, K) * torch.exp(2 * torch.randn(T, 1)),
             "heavy tails randn^3": torch.randn(T, K) ** 3}
    for label, x in cases.items():
        x = x.to(torch.bfloat16)
        sq, ss = run_nvrtc_kernel(ptx, x.cuda().view(torch.int16))
        for name, (q, s) in [("e4m3(x / scale_inv) (the spec to 2026-12-01)", division(x)),
                             ("e4m3(x * fp32(448 * fp32(1/amax)))", candidate(x)),
                             ("the learner's quantize_activation", fp8_block.quantize_activation(x))]:
            d = q.view(torch.uint8) != sq
            print(f"  {label}: NVRTC fast-math kernel vs {name}: codes differ {int(d.sum())} of "
                  f"{d.numel()} in {int(d.any(-1).sum())} of {T} tokens; scales differ "
                  f"{int((bits(s) != bits(ss)).sum())}")


if __name__ == "__main__":
    main()
