"""The experts' activation and router prob: the learner's order (quant.ops.reference_gated_
activation: bf16 silu, bf16 * up, bf16 * prob, then fc2) against SGLang 0.5.23's fused MoE
(silu_and_mul rounded once; the prob multiplied into fc2's fp32 accumulator), W4A16 g128
experts; beside them, the same SGLang order with fc2 summed in another fp32 order, and fc1
rounded one bf16 step off on 1% of its outputs (what another kernel's accumulation does)."""
import torch
from megatron_qarl.quant import get_scheme


def reference_gated_activation(h, probs):
    """The learner's order at session 68 (quant.ops then; session 69 moved it to SGLang's):
    bf16 silu, times up, times the prob, each rounded to bf16."""
    gate, up = torch.chunk(h, 2, dim=-1)
    out = torch.nn.functional.silu(gate) * up
    return (out * probs.unsqueeze(-1)).to(out.dtype)


torch.manual_seed(0)
T, H, FF = 1024, 2048, 768  # Qwen3-30B-A3B's expert shape
sc = get_scheme("w4a16")
W13 = sc.quantize_weight(torch.randn(2 * FF, H) * 0.02)
W2 = sc.quantize_weight(torch.randn(H, FF) * 0.02)
x = torch.randn(T, H).bfloat16()
p = torch.softmax(torch.randn(T, 128), -1).topk(8, -1).values[:, 0].float()
h = sc.reference_matmul(x, W13)
w2 = W2.dequantize().bfloat16().float()


def sglang(h, order=1):
    g, u = h.float().chunk(2, -1)
    act = (g * torch.sigmoid(g) * u).bfloat16().float()
    acc = torch.zeros(T, H)
    chunks = list(range(0, FF, 64))[::order]
    for k in chunks:
        acc += act[:, k:k + 64] @ w2.t()[k:k + 64]
    return (acc * p[:, None]).bfloat16().float()


def rel(a, b):
    return f"{((a - b).norm() / b.norm()).item():.2e} (elements differing {(a != b).float().mean().item():.3f})"


want = sglang(h)
learner = (reference_gated_activation(h, p).float() @ w2.t()).bfloat16().float()
pick = torch.rand(h.shape) < 0.01
nudged = (h.view(torch.int16) + pick.to(torch.int16)).view(torch.bfloat16)  # one bf16 step
print("learner's order vs SGLang's:            ", rel(learner, want))
print("SGLang's order, fc2 summed backwards:   ", rel(sglang(h, -1), want))
print("SGLang's order, 1% of fc1 one step off: ", rel(sglang(nudged), want))

# FP8 block experts: fc2's input is quantized per 1x128 block; the learner quantizes act * prob,
# SGLang act alone (the prob comes after fc2)
fp8 = get_scheme("fp8-block")
F13, F2 = fp8.quantize_weight(torch.randn(2 * FF, H) * 0.02), fp8.quantize_weight(torch.randn(H, FF) * 0.02)
h8 = fp8.reference_matmul(x, F13)
w2_8 = fp8.dequantize(F2).float()
g, u = h8.float().chunk(2, -1)
act_s = (g * torch.sigmoid(g) * u).bfloat16()
want8 = ((fp8.fake_quantize_activation(act_s).float() @ w2_8.t()) * p[:, None]).bfloat16().float()
act_l = reference_gated_activation(h8, p)
learner8 = (fp8.fake_quantize_activation(act_l).float() @ w2_8.t()).bfloat16().float()
print("FP8: learner's order vs SGLang's:        ", rel(learner8, want8))
