"""The reciprocal sgl-kernel's FP8 activation quantizer takes on Hopper, so the learner's
activation codes are the ones SGLang serves with.

sgl-kernel's SM90 library is built with -use_fast_math, so its `448.f / amax` compiles to
div.approx.ftz.f32: 448 times rcp.approx.ftz.f32(amax), the hardware's approximate reciprocal,
which for 20 of the 128 bf16 significands is one ulp off the correctly rounded 1/amax. The
codes are e4m3(x * that), and a quantizer dividing by amax / 448 instead rounds 0.1% of
codes otherwise. The reciprocal of a bf16 amax depends only on its significand: the table below
is rcp.approx.ftz.f32(1 + k/128) as an H200 computes it, and t[k] * 2**-e, flushed to zero under
2**-126, is the GPU's reciprocal of every positive normal bf16 value 1.k * 2**e
(docs/results/sglang_fp8_fast_math_h200_2026-12-01/; tests/kernels/test_sgl_kernel_fp8_codes.py
re-checks it on the GPU it runs on). Other amaxes (fp32 or fp16 activations, whose
significands the table cannot hold) take the correctly rounded reciprocal: there SGLang's codes
may differ. The amax floor 1e-10 (not a bf16 value) takes it too: the instruction gives the same,
1e10.
"""
import functools

import torch

#: rcp.approx.ftz.f32(1 + k/128), k = 0..127, as fp32 bits (H200, 2026-12-01)
RCP_SIGNIFICANDS = (
    0x3f800000, 0x3f7e03f8, 0x3f7c0fc1, 0x3f7a232d, 0x3f783e0f, 0x3f76603e, 0x3f74898e, 0x3f72b9d6,
    0x3f70f0f1, 0x3f6f2eb7, 0x3f6d7304, 0x3f6bbdb2, 0x3f6a0ea1, 0x3f6865ad, 0x3f66c2b4, 0x3f652598,
    0x3f638e39, 0x3f61fc78, 0x3f607038, 0x3f5ee95c, 0x3f5d67c8, 0x3f5beb62, 0x3f5a740d, 0x3f5901b2,
    0x3f579436, 0x3f562b81, 0x3f54c77b, 0x3f53680d, 0x3f520d21, 0x3f50b6a0, 0x3f4f6475, 0x3f4e168a,
    0x3f4ccccd, 0x3f4b8728, 0x3f4a4588, 0x3f4907da, 0x3f47ce0c, 0x3f46980d, 0x3f4565c9, 0x3f443730,
    0x3f430c31, 0x3f41e4bc, 0x3f40c0c1, 0x3f3fa030, 0x3f3e82fa, 0x3f3d6910, 0x3f3c5264, 0x3f3b3ee7,
    0x3f3a2e8c, 0x3f392144, 0x3f381703, 0x3f370fbc, 0x3f360b61, 0x3f3509e7, 0x3f340b41, 0x3f330f63,
    0x3f321643, 0x3f311fd4, 0x3f302c0b, 0x3f2f3ade, 0x3f2e4c41, 0x3f2d602c, 0x3f2c7692, 0x3f2b8f6a,
    0x3f2aaaab, 0x3f29c84b, 0x3f28e840, 0x3f280a81, 0x3f272f05, 0x3f2655c4, 0x3f257eb5, 0x3f24a9cf,
    0x3f23d70a, 0x3f23065e, 0x3f2237c3, 0x3f216b31, 0x3f20a0a1, 0x3f1fd80a, 0x3f1f1166, 0x3f1e4cad,
    0x3f1d89d9, 0x3f1cc8e2, 0x3f1c09c1, 0x3f1b4c70, 0x3f1a90e8, 0x3f19d723, 0x3f191f1a, 0x3f1868c8,
    0x3f17b426, 0x3f17012e, 0x3f164fda, 0x3f15a026, 0x3f14f209, 0x3f144581, 0x3f139a86, 0x3f12f114,
    0x3f124925, 0x3f11a2b4, 0x3f10fdbc, 0x3f105a38, 0x3f0fb824, 0x3f0f177a, 0x3f0e7835, 0x3f0dda52,
    0x3f0d3dcb, 0x3f0ca29c, 0x3f0c08c1, 0x3f0b7034, 0x3f0ad8f3, 0x3f0a42f9, 0x3f09ae41, 0x3f091ac7,
    0x3f088889, 0x3f07f781, 0x3f0767ab, 0x3f06d906, 0x3f064b8b, 0x3f05bf37, 0x3f053409, 0x3f04a9fa,
    0x3f042108, 0x3f039931, 0x3f03126f, 0x3f028cc0, 0x3f020821, 0x3f01848e, 0x3f010204, 0x3f008080,
)
MIN_NORMAL = 2.0 ** -126


@functools.lru_cache(maxsize=None)
def significand_table(device: torch.device) -> torch.Tensor:
    """RCP_SIGNIFICANDS as fp32 [128] on `device` (the Triton quantizers gather from it for fp32
    activations and under the interpreter; on the GPU bf16 ones run the instruction itself)."""
    return torch.tensor(RCP_SIGNIFICANDS, dtype=torch.int32).view(torch.float32).to(device)


def hopper_reciprocal(amax: torch.Tensor) -> torch.Tensor:
    """fp32 amax (>= 1e-10) -> rcp.approx.ftz.f32(amax) where amax is a bf16 value; the
    correctly rounded 1 / amax elsewhere (the floor's is the instruction's)."""
    bits = amax.view(torch.int32)
    exponent = (bits >> 23) & 0xFF
    pow2 = torch.where(exponent < 254, (254 - exponent) << 23, 0).view(torch.float32)
    rcp = significand_table(amax.device)[(bits >> 16) & 0x7F] * pow2
    rcp = torch.where(rcp < MIN_NORMAL, 0.0, rcp)
    return torch.where((bits & 0xFFFF) == 0, rcp, 1.0 / amax)
