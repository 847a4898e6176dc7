"""How many activation codes and scales of the learner's FP8 and INT8 quantizers (the CPU
references of megatron_qarl.quant, which the project's kernels equal bit for bit) differ from
SGLang's own activation quantizers' arithmetic, run here as Triton kernels on the GPU:
- FP8 (sgl-kernel's per_token_group_quant_8bit): scale_inv = amax * fp32(1/448),
  codes = e4m3_satfinite(x * (448 / amax)); the division taken IEEE (tl.div_rn) and as
  Triton's plain `/` (div.full.f32). sgl-kernel's own build decides which it is: not run here.
- INT8 (SGLang's Triton per_token_quant_int8): scale = absmax / 127,
  codes = libdevice.round(x * (127 / absmax)), both divisions Triton's plain `/`; and the same
  with tl.div_rn.
Input: bf16 activations [8192, 2048], randn scaled per token by U(0, 4), seed 0."""
import torch
import triton
import triton.language as tl

from megatron_qarl.quant import fp8_block, int8


@triton.jit
def _fp8_sglang(x_ptr, q_ptr, s_ptr, IEEE: tl.constexpr):
    g = tl.program_id(0)
    offs = g * 128 + tl.arange(0, 128)
    v = tl.load(x_ptr + offs).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(v)), 1e-10)
    tl.store(s_ptr + g, amax * (1.0 / 448.0))
    if IEEE:
        mult = tl.div_rn(448.0 + tl.zeros_like(amax), amax)
    else:
        mult = 448.0 / amax
    tl.store(q_ptr + offs, tl.clamp(v * mult, -448.0, 448.0).to(tl.float8e4nv))


@triton.jit
def _int8_sglang(x_ptr, q_ptr, s_ptr, K: tl.constexpr, IEEE: tl.constexpr):
    r = tl.program_id(0)
    offs = r * K + tl.arange(0, K)
    v = tl.load(x_ptr + offs).to(tl.float32)
    absmax = tl.maximum(tl.max(tl.abs(v)), 1e-10)
    if IEEE:
        scale = tl.div_rn(absmax, 127.0 + tl.zeros_like(absmax))
        mult = tl.div_rn(127.0 + tl.zeros_like(absmax), absmax)
    else:
        scale = absmax / 127
        mult = 127 / absmax
    tl.store(s_ptr + r, scale)
    tl.store(q_ptr + offs, tl.extra.cuda.libdevice.round(v * mult).to(tl.int8))


def main():
    torch.manual_seed(0)
    T, K = 8192, 2048
    x = (torch.randn(T, K) * torch.rand(T, 1) * 4).to(torch.bfloat16)
    xg = x.cuda()
    fq, fs = fp8_block.quantize_activation(x)
    iq, is_ = int8.quantize_activation(x)
    for ieee in (True, False):
        q = torch.empty(T, K, dtype=torch.float8_e4m3fn, device="cuda")
        s = torch.empty(T * K // 128, device="cuda")
        _fp8_sglang[(T * K // 128,)](xg, q, s, ieee)
        q, s = q.cpu(), s.cpu().view(T, -1)
        d = q.view(torch.uint8) != fq.view(torch.uint8)
        print(f"fp8, 448/amax {'IEEE' if ieee else 'plain /'}: codes differ {d.sum().item()} "
              f"of {d.numel()} in {d.any(-1).sum().item()} of {T} tokens; scales differ "
              f"{(s != fs).sum().item()} of {s.numel()}")
        q = torch.empty(T, K, dtype=torch.int8, device="cuda")
        s = torch.empty(T, device="cuda")
        _int8_sglang[(T,)](xg, q, s, K, ieee)
        q, s = q.cpu(), s.cpu()
        d = q != iq
        print(f"int8, divisions {'IEEE' if ieee else 'plain /'}: codes differ {d.sum().item()} "
              f"of {d.numel()} in {d.any(-1).sum().item()} of {T} tokens; scales differ "
              f"{(s != is_[:, 0]).sum().item()} of {T}")


if __name__ == "__main__":
    main()
