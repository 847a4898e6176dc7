"""Our FP8Block tensors in the layout TransformerEngine's blockwise-FP8 GEMM reads (pure torch,
so CI checks it without TE).

TE's "GEMM-ready" layout (TE docs, FP8 blockwise scaling, developer notes; checked against
`Float8BlockQuantizer.get_scale_shape` in TE v2.12-v2.18), for a rowwise tensor [A, B]:
- 128x128 blocks (our weights): scale_inv [ceil(A/128), pad4(ceil(B/128))], block-row major;
- 1x128 blocks (our activations): scale_inv [ceil(B/128), pad4(A)], i.e. transposed:
  entry [kb, token].
FP8 data is passed as uint8 with the same bytes. The cuBLAS blockwise GEMM also wants the
1x128 operand's row count (tokens) to be a multiple of 8 (TE's `CanonicalizeGemmInput`:
"Outer dimension requirement on B ... Caller must pad"), so tokens are padded per expert
with zero rows, whose outputs are dropped.
"""
from __future__ import annotations

from typing import List, Tuple

import torch
import torch.nn.functional as F

SCALE_PAD = 4  # TE pads the non-blocked scale dim to a multiple of 4
ROW_MULTIPLE = 8  # cuBLAS blockwise FP8: rows of the 1x128-scaled operand


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def weight_scale_inv_for_te(scale_inv: torch.Tensor) -> torch.Tensor:
    """Our [..., ceil(out/128), ceil(in/128)] weight scales -> [..., same, pad4(...)] (zeros in
    the padding, which the GEMM never reads)."""
    pad = (-scale_inv.shape[-1]) % SCALE_PAD
    return F.pad(scale_inv.float(), (0, pad)).contiguous()


def activation_scale_inv_for_te(scale: torch.Tensor) -> torch.Tensor:
    """Our token-major [tokens, ceil(K/128)] activation scales -> TE's [ceil(K/128), tokens]
    (tokens already padded to a multiple of 8, hence of 4)."""
    if scale.shape[0] % SCALE_PAD:
        raise ValueError(f"{scale.shape[0]} token rows: pad them to a multiple of {SCALE_PAD}")
    return scale.float().t().contiguous()


def padded_group_rows(counts: List[int], device=None) -> Tuple[List[int], torch.Tensor]:
    """Per-group row counts rounded up to ROW_MULTIPLE, and for each real row (groups in
    order) its row in the padded layout."""
    padded = [_round_up(c, ROW_MULTIPLE) for c in counts]
    real = torch.tensor(counts, dtype=torch.long)
    pad = torch.tensor(padded, dtype=torch.long) - real
    shift = pad.cumsum(0) - pad  # padding rows of the groups before each group
    index = torch.arange(int(real.sum())) + shift.repeat_interleave(real)
    return padded, index.to(device)


def scatter_rows(rows: torch.Tensor, index: torch.Tensor, total: int) -> torch.Tensor:
    """rows [n, ...] placed at `index` of a zero [total, ...] tensor (FP8 moved as uint8)."""
    data = rows.view(torch.uint8) if rows.dtype == torch.float8_e4m3fn else rows
    out = data.new_zeros(total, *data.shape[1:])
    out[index] = data
    return out
