import pytest
import torch

from megatron_qarl.quant import aligned_grouped_linear, get_scheme
from qarl_kernels.grouped_mm import grouped_mm, grouped_weight_grad
from qarl_kernels.moe_backward import grouped_grad_weight, w4a16_grouped_grad_input


def _case(device):
    torch.manual_seed(0)
    scheme = get_scheme("w4a16-g32")
    master = torch.randn(3, 24, 64, device=device)
    tokens = torch.tensor([4, 0, 3])
    x = torch.randn(7, 64, device=device).bfloat16().requires_grad_()
    grad_out = torch.randn(7, 24, device=device).bfloat16()
    return scheme, master, tokens, x, grad_out


def test_grads_match_the_ste_reference(device, assert_gemm_close):
    scheme, master, tokens, x, grad_out = _case(device)
    master.requires_grad_()
    qweight = scheme.quantize_weight(master.detach())
    # the STE reference (pure torch; CUDA kernels are not registered in this test)
    aligned_grouped_linear(x, master, qweight, tokens).backward(grad_out.float().bfloat16())
    assert_gemm_close(w4a16_grouped_grad_input(grad_out, qweight, tokens), x.grad)
    grad_w = grouped_grad_weight(grad_out, x.detach(), tokens)
    assert grad_w.dtype == torch.bfloat16
    assert not grad_w[1].any()  # the expert without tokens
    assert_gemm_close(grad_w, master.grad)


@pytest.mark.parametrize("use_torch", [True, False])
def test_torch_grouped_mm_and_fallback_agree(use_torch, device, assert_gemm_close):
    _, _, tokens, x, grad_out = _case(device)
    x = x.detach()
    b = torch.randn(3, 64, 24, device=device).bfloat16()
    loop = [x[:4] @ b[0], x[4:4] @ b[1], x[4:] @ b[2]]
    assert_gemm_close(grouped_mm(x, b, tokens, use_torch), torch.cat(loop))
    want = torch.stack([grad_out[:4].t() @ x[:4], torch.zeros(24, 64, device=device),
                        grad_out[4:].t() @ x[4:]])
    assert_gemm_close(grouped_weight_grad(grad_out, x, tokens, use_torch), want)
