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


def test_weight_cache_quantizes_through_the_registry():
    from megatron_qarl.layers.weight_cache import QuantizedWeightCache
    from qarl_kernels.w4a16_quantize import w4a16_quantize

    calls = []

    def counting_kernel(weight, scheme, name):
        calls.append(name)
        return w4a16_quantize(weight, scheme, name)

    ops.register_quantize(W4A16, "cpu", counting_kernel)
    try:
        masters = [torch.nn.Parameter(torch.randn(16, 64)) for _ in range(2)]
        cache = QuantizedWeightCache(W4A16(32), masters, "experts.linear_fc1", stacked=True)
        qw = cache.get()
        assert calls == ["experts.linear_fc1"]
        reference = W4A16(32).quantize_weight(torch.stack(masters).detach())
        assert torch.equal(qw.data, reference.data) and torch.equal(qw.scale, reference.scale)
    finally:
        ops._QUANTIZE.pop(("W4A16", "cpu"))
