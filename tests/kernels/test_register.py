"""The CUDA registration covers the GEMMs and the per-step quantizer, and a registered
quantizer is what the layers' weight cache calls."""
import torch

from megatron_qarl.quant import W4A16, ops


def test_register_cuda_kernels_covers_gemms_and_quantizers():
    from qarl_kernels.register import register_cuda_kernels

    register_cuda_kernels()
    registered = ops.registered_ops()
    for kind in ("linear", "grouped", "quantize"):
        assert ("W4A16", "cuda") in registered[kind] and ("FP8Block", "cuda") in registered[kind]
    for kind in ("linear", "grouped", "quantize", "linear_backward", "grouped_backward",
                 "swiglu_experts"):
        assert ("Int8W8A8", "cuda") in registered[kind]
    assert ("W4A16", "cuda") in registered["grouped_backward"]
    assert ("W4A16", "cuda") in registered["linear_backward"]
    assert ("FP8Block", "cuda") in registered["linear_backward"]
    assert ("FP8Block", "cuda") in registered["grouped_backward"]
    assert ("W4A16", "cuda") in registered["swiglu_experts"]
    assert ("FP8Block", "cuda") in registered["swiglu_experts"]
    assert registered["dispatch_quantizer"] == [("FP8Block", "cuda"), ("Int8W8A8", "cuda")]
    assert ("NoQuant", "cuda") in registered["grouped"]  # --moe-grouped-gemm's bf16 experts
    assert ("NoQuant", "cuda") in registered["grouped_backward"]
    assert ("NoQuant", "cuda") in registered["quantize"]  # the stack's bf16 copy and check
    assert registered["routed_sum"] == registered["write_rows"] == registered["race_argmax"] \
        == registered["token_logprobs"] == registered["gated_activation"] == ["cuda"]


def test_each_scheme_runs_its_own_kernels():
    """A key that holds another scheme's op would misread the weight (an INT8 weight's codes
    through the FP8 GEMM) on the GPU only, where no CPU test runs it."""
    from qarl_kernels import fp8_gemm, int8_gemm, register, w4a16_gemm
    from qarl_kernels.register import register_cuda_kernels

    register_cuda_kernels()
    for module, scheme in ((w4a16_gemm, "W4A16"), (fp8_gemm, "FP8Block"), (int8_gemm, "Int8W8A8")):
        for registry in (ops._LINEAR, ops._GROUPED, ops._SWIGLU_EXPERTS):
            assert registry[(scheme, "cuda")].__module__ == module.__name__, (scheme, registry)
    assert ops._GROUPED[("NoQuant", "cuda")] is register.bf16_grouped_linear
    for scheme, op in (("W4A16", "w4a16_grouped_backward"), ("FP8Block", "fp8_grouped_backward"),
                       ("Int8W8A8", "int8_grouped_backward"),
                       ("NoQuant", "bf16_grouped_backward")):
        assert ops._GROUPED_BACKWARD[(scheme, "cuda")] is getattr(register, op)
    for scheme, op in (("W4A16", "w4a16_quantize"), ("FP8Block", "fp8_block_quantize"),
                       ("Int8W8A8", "int8_quantize"), ("NoQuant", "bf16_quantize")):
        assert ops._QUANTIZE[(scheme, "cuda")] is getattr(register, op)
    assert ops._DISPATCH_QUANTIZER[("FP8Block", "cuda")] is register.fp8_quantize_packed_rows
    assert ops._DISPATCH_QUANTIZER[("Int8W8A8", "cuda")] is register.int8_quantize_packed_rows


def test_weight_cache_quantizes_through_the_registry(device):
    from megatron_qarl.layers.weight_cache import QuantizedWeightCache
    from qarl_kernels.w4a16_quantize import w4a16_quantize

    calls = []

    def counting_kernel(weight, scheme, name, nonfinite=None):
        calls.append(name)
        return w4a16_quantize(weight, scheme, name, nonfinite=nonfinite)

    previous = ops._QUANTIZE.get(("W4A16", device.type))
    ops.register_quantize(W4A16, device.type, counting_kernel)
    try:
        masters = [torch.nn.Parameter(torch.randn(16, 64, device=device)) for _ in range(2)]
        cache = QuantizedWeightCache(W4A16(32), masters, "experts.linear_fc1", stacked=True)
        qw = cache.get()
        assert calls == ["experts.linear_fc1"]
        reference = W4A16(32).quantize_weight(torch.stack(masters).detach())
        assert torch.equal(qw.data, reference.data) and torch.equal(qw.scale, reference.scale)
    finally:
        _restore(ops._QUANTIZE, ("W4A16", device.type), previous)


def test_an_op_registered_after_enabling_outlives_model_builds():
    """build_model enables the CUDA ops for every model it builds; an op registered since must
    stay (session 47's step A/Bs ran the default op in every arm when it did not)."""
    from megatron_qarl.layers import enable_cuda_kernels

    enable_cuda_kernels()
    previous = ops._QUANTIZE.get(("W4A16", "cuda"))

    def own_quantizer(weight, scheme, name):
        return scheme.quantize_weight(weight, name)

    ops.register_quantize(W4A16, "cuda", own_quantizer)
    try:
        enable_cuda_kernels()  # the next build_model
        assert ops._QUANTIZE[("W4A16", "cuda")] is own_quantizer
    finally:
        _restore(ops._QUANTIZE, ("W4A16", "cuda"), previous)


def _restore(registry, key, previous):
    """Put back what the test replaced (on a GPU, register_cuda_kernels' op)."""
    if previous is None:
        registry.pop(key)
    else:
        registry[key] = previous


def test_grouped_ste_backward_runs_the_registered_kernel(assert_gemm_close, device):
    from megatron_qarl.quant import aligned_grouped_linear, get_scheme
    from qarl_kernels.moe_backward import w4a16_grouped_backward

    torch.manual_seed(0)
    scheme = get_scheme("w4a16-g32")
    tokens = torch.tensor([4, 0, 3])
    grad_out = torch.randn(7, 24).bfloat16().to(device)

    def grads():
        masters = [torch.randn(24, 64, generator=torch.Generator().manual_seed(e)).to(device)
                   .requires_grad_() for e in range(3)]
        x = torch.randn(7, 64, generator=torch.Generator().manual_seed(9)).bfloat16().to(device)
        x.requires_grad_()
        qweight = scheme.quantize_weight(torch.stack(masters).detach())
        aligned_grouped_linear(x, masters, qweight, tokens).backward(grad_out)
        return x.grad, [m.grad for m in masters]

    previous = ops._GROUPED_BACKWARD.pop(("W4A16", device.type), None)
    reference_x, reference_w = grads()  # the pure-torch STE backward
    calls = []

    def counting_backward(*args):
        calls.append(1)
        return w4a16_grouped_backward(*args)

    ops.register_grouped_backward(W4A16, device.type, counting_backward)
    try:
        kernel_x, kernel_w = grads()
    finally:
        _restore(ops._GROUPED_BACKWARD, ("W4A16", device.type), previous)
    assert calls == [1]
    assert_gemm_close(kernel_x, reference_x)
    for kernel, reference in zip(kernel_w, reference_w):
        assert kernel.dtype == torch.float32  # cast back to the master's dtype
        assert_gemm_close(kernel, reference)
    assert not kernel_w[1].any()
