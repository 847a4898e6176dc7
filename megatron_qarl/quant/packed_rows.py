"""Quantized tokens as one uint8 row each, for the MoE dispatcher to move (layers.token_dispatch):
the codes, then the token's fp32 scales. Any token mover (Megatron's permute, all-to-all and
chunk sort) carries such rows unchanged, at about half the bytes of bf16 tokens.

Both regions start at multiples of 16 bytes: TMA row strides are multiples of 16, and the fp32
scales need 4-byte alignment.
"""
from __future__ import annotations

import torch

PACKED_ALIGN = 16


def _aligned(n: int) -> int:
    return -(-n // PACKED_ALIGN) * PACKED_ALIGN


def packed_row_bytes(hidden: int, scales: int) -> int:
    """Bytes per token: `hidden` one-byte codes, then `scales` fp32 scales."""
    return _aligned(hidden) + _aligned(4 * scales)


def pack_rows(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """(one-byte codes [T, H], fp32 scales [T, S]) -> uint8 [T, packed_row_bytes(H, S)]."""
    rows, hidden = q.shape
    packed = torch.zeros(rows, packed_row_bytes(hidden, scale.shape[-1]), dtype=torch.uint8,
                         device=q.device)
    packed[:, :hidden] = q.view(torch.uint8)
    offset = _aligned(hidden)
    packed[:, offset:offset + 4 * scale.shape[-1]] = scale.float().contiguous().view(torch.uint8)
    return packed


def unpack_rows(packed: torch.Tensor, hidden: int, scales: int, code_dtype: torch.dtype,
                scheme: str) -> tuple:
    """Views (no copy) of the codes [T, H] and the token-major scales [T, S]."""
    if packed.dtype != torch.uint8 or packed.dim() != 2 or packed.shape[1] != packed_row_bytes(
            hidden, scales):
        raise ValueError(
            f"packed: {packed.dtype} {tuple(packed.shape)}; {scheme} rows of {hidden} inputs are "
            f"uint8 [tokens, {packed_row_bytes(hidden, scales)}] (pack_activation_rows)")
    offset = _aligned(hidden)
    return (packed[:, :hidden].view(code_dtype),
            packed[:, offset:offset + 4 * scales].view(torch.float32))
