"""FP8 fc2 with the router prob as SGLang's Triton fused MoE takes it (fp32 top-k weights,
sglang/srt/layers/moe/topk.py's fused_topk: torch.empty(M, topk, dtype=torch.float32)) against
the prob the learner gets from Megatron 0.16.1's router (softmax in fp32, then
.type_as(logits): bf16 for a bf16 model), both through quant.base.scale_rows (the prob times
fc2's fp32 accumulator before the one rounding, MUL_ROUTED_WEIGHT's order).

Run from the repository root: python docs/results/router_prob_dtype_cpu_2026-12-01/probe.py
"""
import torch

from megatron_qarl.quant import get_scheme

torch.manual_seed(0)
scheme = get_scheme("fp8-block")
x = torch.randn(512, 768).bfloat16()
qweight = scheme.quantize_weight(torch.randn(2, 2048, 768) * 0.02)  # fc2 of 2 experts
counts = torch.tensor([256, 256])
top, _ = torch.randn(512, 128).topk(8, -1)
p32 = torch.softmax(top, -1, dtype=torch.float32)[:, 0]  # SGLang's top-k weight
p16 = p32.bfloat16()  # the learner's
a = scheme.reference_grouped_matmul(x, qweight, counts, p32).float()
b = scheme.reference_grouped_matmul(x, qweight, counts, p16).float()
relative = ((a - b).norm() / a.norm()).item()
print(f"fc2 output, fp32 against bf16 prob: relative norm {relative:.3e}, "
      f"elements differing {(a != b).float().mean().item():.3f}")
