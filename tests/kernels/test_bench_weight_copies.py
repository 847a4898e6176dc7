"""The benchmark's W4A16 weight copies (bench.cases.W4A16Copies): as many as the bytes one
call reads need to leave L2, counted from its touched experts, not from the layer."""
import math

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import cases
from qarl_kernels.w4a16_dequantize import w4a16_dequantize

E, N, K = 4, 8, 128
INT4_EXPERT = N * K // 2 + N * (K // 128) * 2  # codes and one bf16 scale a row
BF16_EXPERT = N * K * 2


def test_copies_follow_the_touched_experts_bytes(monkeypatch, device):
    rotate = 4 * INT4_EXPERT  # "L2" of 4 experts' int4: one expert needs 4 copies
    monkeypatch.setattr(cases, "copies_for", lambda nbytes: math.ceil(rotate / nbytes))
    copies = cases.W4A16Copies(get_scheme("w4a16"), E, N, K, device=device)
    whole = copies.int4(E)
    assert len(whole) == 1
    one = copies.int4(1)
    assert len(one) == 4 and one[0] is whole[0]  # made as asked for, the first kept
    assert len(copies.int4(0)) == 1  # a call that reads no expert
    assert all(not torch.equal(one[0].data, q.data) for q in one[1:])
    bf16 = copies.bf16(1)
    assert len(bf16) == math.ceil(rotate / BF16_EXPERT)
    for q, w in zip(one, bf16):  # bf16 copy i is int4 copy i dequantized, [E, K, N]
        assert torch.equal(w, w4a16_dequantize(q).transpose(1, 2))
