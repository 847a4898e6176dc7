"""The experts' activation and router prob after session 69: the learner's experts
(quant.ops.composed_swiglu_experts on the CPU references, which every kernel reproduces)
against a model of SGLang 0.5.23's fused MoE kernels at Qwen3-30B-A3B's expert shape: the
activation as silu_and_mul computes it (x / (1 + expf(-x)) times up in fp32, rounded once);
for W4A16 (Marlin MoE, marlin_template.h write_result) fc2's output rounded to bf16 and
multiplied by the bf16 prob (__hmul2), for FP8 block (the Triton fused MoE,
MUL_ROUTED_WEIGHT) the prob in fc2's fp32 accumulator. Beside them: the other form of the
prob on each scheme, SGLang's arithmetic with fc2 summed in another fp32 order, and with 1% of
fc1's outputs one bf16 step off (what another kernel's accumulation does)."""
import torch

from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.ops import composed_swiglu_experts

torch.manual_seed(0)
T, H, FF = 1024, 2048, 768
counts = torch.tensor([T])
x = torch.randn(T, H).bfloat16()
p = torch.softmax(torch.randn(T, 128), -1).topk(8, -1).values[:, 0].float()


def rel(a, b):
    return (f"{((a - b).norm() / b.norm()).item():.2e} "
            f"(elements differing {(a != b).float().mean().item():.3f})")


def sglang(scheme, h, w2, marlin, order=1):
    g, u = h.float().chunk(2, -1)
    act = scheme.fake_quantize_activation((g / (1 + torch.exp(-g)) * u).bfloat16())
    acc = torch.zeros(T, H)
    for k in list(range(0, FF, 128))[::order]:
        acc += act[:, k:k + 128] @ w2.t()[k:k + 128]
    if marlin:  # write_result: the bf16 output times the bf16 prob (__hmul2)
        return (acc.bfloat16() * p[:, None].bfloat16()).float()
    return (acc * p[:, None]).bfloat16().float()


for name in ("w4a16", "fp8-block"):
    scheme = get_scheme(name)
    w13 = scheme.quantize_weight(torch.randn(1, 2 * FF, H) * 0.02)
    w2 = scheme.quantize_weight(torch.randn(1, H, FF) * 0.02)
    h = scheme.reference_grouped_matmul(x, w13, counts)
    w2_op = scheme.dequantize(w2)[0].to(scheme.weight_operand_dtype).float()
    marlin = name == "w4a16"  # the kernel SGLang serves the scheme's MoE with
    want = sglang(scheme, h, w2_op, marlin)
    learner = composed_swiglu_experts(x, w13, w2, counts, p).float()
    other = sglang(scheme, h, w2_op, not marlin)
    pick = torch.rand(h.shape) < 0.01
    nudged = (h.view(torch.int16) + pick.to(torch.int16)).view(torch.bfloat16)
    backwards, off = sglang(scheme, h, w2_op, marlin, -1), sglang(scheme, nudged, w2_op, marlin)
    kernel = "Marlin" if marlin else "Triton"
    print(f"{name}: learner vs SGLang's {kernel} MoE:            {rel(learner, want)}")
    print(f"{name}: learner vs the other kernel's form:        {rel(learner, other)}")
    print(f"{name}: {kernel}'s, fc2 summed backwards:          {rel(backwards, want)}")
    print(f"{name}: {kernel}'s, 1% of fc1 one step off:        {rel(off, want)}")
