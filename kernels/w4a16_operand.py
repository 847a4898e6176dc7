"""The bf16 operand of the W4A16 grouped GEMMs (large-M forward, backward grad_input).

A QuantizedWeight with keep_operand=True keeps its operand after the first call. The learner's
cache makes one such object per optimizer step, so the old-logprob pass and every micro-batch
forward and backward of the step reuse the same bits instead of dequantizing again, for
2 B/param of memory. Otherwise each call dequantizes only the experts that have tokens.
"""
import torch

from .w4a16_dequantize import w4a16_dequantize


def w4a16_operand(qweight, tokens_per_expert: torch.Tensor) -> torch.Tensor:
    """bf16 [E, out, in]; rows of experts without tokens are unset unless kept."""
    if not qweight.keep_operand:
        return w4a16_dequantize(qweight, tokens_per_expert)
    if qweight.operand is None:  # every expert: later batches route their tokens elsewhere
        qweight.operand = w4a16_dequantize(qweight)
    return qweight.operand
