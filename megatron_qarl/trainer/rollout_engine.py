"""The rollout engine `--rollout-engine` names, built for the trainer: both implement
RolloutEngine, so the RL loop's generate/publish calls do not depend on the choice."""
from __future__ import annotations

from megatron.core import parallel_state

from ..checkpoint.hf_config import dims_from_config
from ..layers import invalidate_quantized_weights
from ..rollout.base import RolloutEngine
from ..rollout.embedded import EmbeddedEngine
from ..rollout.sglang import SGLangRolloutEngine
from ..rollout.sglang.driver_generation import DriverGeneration
from .distributed import dp_rank_and_size
from .models import build_policy
from .sglang_flags import sglang_config


def build_rollout_engine(args, model, tokenizer, hf_config: dict, device,
                         window_multiple: int) -> RolloutEngine:
    """model: the learner; hf_config: its HF config.json (models.model_hf_config, with its
    padded vocabulary rows); window_multiple: the TP size under sequence parallelism
    (embedded engine)."""
    dp_rank, _ = dp_rank_and_size()
    vocab = hf_config["vocab_size"]
    if args.rollout_engine == "sglang":
        return _sglang(args, hf_config, dp_rank)
    if args.learner_quant == args.rollout_quant:
        rollout_model, refresh = model, None  # QaRL / bf16: one model, one cache
    else:
        rollout_model, _ = build_policy(args, args.rollout_quant, vocab, device)
        refresh = invalidate_quantized_weights
    return EmbeddedEngine(rollout_model, pad_id=tokenizer.pad_id,
                          max_batch=args.rollout_max_batch, seed=args.seed + dp_rank,
                          device=device, on_weights_loaded=refresh,
                          window_multiple=window_multiple,
                          sync_group=parallel_state.get_data_parallel_group()
                          if args.expert_model_parallel_size > 1 else None,
                          record_routes=args.rollout_routing_replay,
                          cuda_graph=args.rollout_cuda_graph)


def _sglang(args, hf_config: dict, dp_rank: int) -> RolloutEngine:
    """The served model has the learner's shapes and vocabulary rows (serve an export of
    this learner's checkpoint); publishing sends exactly those tensors."""
    cfg = sglang_config(args, dims_from_config(hf_config),
                        top_k=hf_config["num_experts_per_tok"])
    return DriverGeneration(SGLangRolloutEngine(cfg), dp_rank)
