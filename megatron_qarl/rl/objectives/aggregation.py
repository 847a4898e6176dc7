"""Reduce a per-token loss [B, S] to the scalar that is backpropagated.

Modes (flag --loss-agg-mode):
  token-mean            sum of all response-token losses / number of response tokens
                        (DAPO; every token weighs the same, long responses weigh more).
  seq-mean-token-mean   mean over each sequence's tokens, then mean over sequences
                        (GRPO/GSPO paper form; every response weighs the same).
  seq-mean-token-sum    sum over each sequence's tokens, then mean over sequences
                        (the issue's "seq-sum"; named in full because a bare sum has no
                        normaliser, and this one needs the sequence count).

Data parallelism, as in Megatron: the loss is sum / normaliser. Without `normalizer` it is
the local count (local_normalizer), which gives the per-rank mean. To get the global mean,
all-reduce local_normalizer over the DP ranks (and all micro-batches of the step) and pass
the result: each rank then returns its share, and the shares (and their gradients) summed
over ranks equal the single-rank loss over the whole batch. If the DDP wrapper averages
gradients over ranks instead of summing them, scale the loss by the DP size.

The normaliser counts the response mask only, never which sequences an objective clipped or
masked: it is known before the forward pass, so ranks can agree on it up front, and a masked
sequence removes its gradient without enlarging everyone else's.
"""
import torch
from torch import Tensor

from .numerics import as_bool_mask, sequence_lengths

TOKEN_MEAN = "token-mean"
SEQ_MEAN_TOKEN_MEAN = "seq-mean-token-mean"
SEQ_MEAN_TOKEN_SUM = "seq-mean-token-sum"
AGG_MODES = (TOKEN_MEAN, SEQ_MEAN_TOKEN_MEAN, SEQ_MEAN_TOKEN_SUM)


def _check_mode(mode: str) -> None:
    if mode not in AGG_MODES:
        raise ValueError(f"--loss-agg-mode must be one of {', '.join(AGG_MODES)}: got {mode!r}")


def local_normalizer(response_mask: Tensor, mode: str) -> Tensor:
    """This rank's count for `mode`: response tokens, or sequences with a response token."""
    _check_mode(mode)
    mask = as_bool_mask(response_mask)
    if mode == TOKEN_MEAN:
        return mask.sum().float()
    return mask.any(dim=-1).sum().float()


def aggregate_loss(token_loss: Tensor, response_mask: Tensor, mode: str,
                   normalizer: float | Tensor | None = None) -> Tensor:
    """Scalar loss = (sum per `mode`) / normaliser; a normaliser below 1 counts as 1."""
    _check_mode(mode)
    mask = as_bool_mask(response_mask)
    token_loss = torch.where(mask, token_loss.float(), 0.0)
    if mode == TOKEN_MEAN:
        total = token_loss.sum()
    else:
        per_sequence = token_loss.sum(dim=-1)
        if mode == SEQ_MEAN_TOKEN_MEAN:
            per_sequence = per_sequence / sequence_lengths(mask).clamp(min=1.0)
        total = per_sequence.sum()
    if normalizer is None:
        normalizer = local_normalizer(mask, mode)
    denominator = torch.as_tensor(normalizer, dtype=torch.float32, device=total.device)
    return total / denominator.clamp(min=1.0)
