import torch, triton
from megatron_qarl.quant.int8 import quantize_activation
from qarl_kernels import int8_gemm as g
torch.manual_seed(0)
for k in (300, 2500, 512, 256):
    x = (torch.randn(5, k, device="cuda") * 3).bfloat16()
    rq, rs = quantize_activation(x)
    for block, warps in ((triton.next_power_of_2(k), 2), (triton.next_power_of_2(k), 8), (256, 4), (128, 1)):
        block = min(block, 2048)
        q = torch.empty(5, k, device="cuda", dtype=torch.int8); s = torch.empty(5, 1, device="cuda")
        g._int8_activation_kernel[(5,)](x, q, s, k, x.stride(0), q.stride(0), BLOCK=block, num_warps=warps)
        bad = (q != rq).nonzero()
        print(k, block, warps, "mismatches", len(bad), "scales eq", torch.equal(s, rs))
        if len(bad):
            r, c = bad[0].tolist()
            v = x[r, c].float() * (127.0 / rs[r, 0] / 127.0 * 127.0)
            print("   first", r, c, "x", x[r, c].item(), "kernel", q[r, c].item(), "ref", rq[r, c].item(),
                  "x*127/amax", (x[r, c].float() * (torch.tensor([127.0], device="cuda") / (rs[r] * 127))).item())
