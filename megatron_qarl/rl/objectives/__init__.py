"""RL policy objectives of QaRL (pure torch, no Megatron import).

Trainer flags (add_policy_loss_args / PolicyLossConfig.from_flags):
  --loss {grpo,dapo,dual_clip,gspo,tbpo}   objective (ppo.py, gspo.py, tbpo.py)
  --mismatch-correction {none,tis,tis2,mis} sampler/learner correction (tis.py, mis.py);
                                            must be none with tbpo, which has its own weight
  --loss-agg-mode {token-mean,seq-mean-token-mean,seq-mean-token-sum}  (aggregation.py)
  --clip-ratio-low --clip-ratio-high --dual-clip-ratio-c            token clip
  --seq-clip-ratio-low --seq-clip-ratio-high                        gspo (high: also tbpo)
  --neg-seq-clip-ratio-low --neg-seq-clip-ratio-high --seq-tis-imp-ratio-cap   tbpo
  --tis-imp-ratio-cap --mis-ratio-low --mis-ratio-high              corrections
Per step: compute_policy_loss(cfg, logprobs, old_logprobs, advantages, response_mask,
sampler_logprobs, normalizer=global count) -> (loss, metrics).
"""
from .advantages import group_normalized_advantages
from .aggregation import AGG_MODES, aggregate_loss, local_normalizer
from .config import (
    LOSSES,
    MISMATCH_CORRECTIONS,
    GSPOConfig,
    MismatchConfig,
    PolicyLossConfig,
    TBPOConfig,
    TokenClipConfig,
    add_policy_loss_args,
)
from .diagnostics import entropy_from_logits, mismatch_stats
from .error_tokens import ErrorTokenConfig, ErrorTokenReport, detect_error_tokens, error_token_metrics
from .interface import LossInputs, ObjectiveOutput
from .policy_loss import OBJECTIVES, compute_policy_loss

__all__ = [
    "AGG_MODES", "LOSSES", "MISMATCH_CORRECTIONS", "OBJECTIVES",
    "ErrorTokenConfig", "ErrorTokenReport", "GSPOConfig", "LossInputs", "MismatchConfig",
    "ObjectiveOutput", "PolicyLossConfig", "TBPOConfig", "TokenClipConfig",
    "add_policy_loss_args", "aggregate_loss", "compute_policy_loss", "detect_error_tokens",
    "entropy_from_logits", "error_token_metrics", "group_normalized_advantages",
    "local_normalizer", "mismatch_stats",
]
