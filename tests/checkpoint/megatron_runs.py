"""Loading a converted checkpoint into a QaRL Megatron model (any TP/EP) on CPU and running
it: the logits, and the learner's cached quantized weights. Module-level so the 2-process
runs can pickle it."""
import json
import os

import torch
from megatron.core import dist_checkpointing
from megatron.core.dist_checkpointing.validation import StrictHandling
from megatron.core.tensor_parallel import gather_from_tensor_model_parallel_region

from megatron_qarl.checkpoint.model_preset import preset_from_hf_config
from megatron_qarl.compat.cpu_testing import init_parallel
from megatron_qarl.models import build_model


def load_model(ckpt_dir, tp=1, ep=1, scheme="none", targets="experts", dtype=torch.float32):
    """A model of the checkpoint's config, loaded with Megatron's strict key check (a key
    missing from, or extra in, the checkpoint raises)."""
    init_parallel(tp=tp, ep=ep, etp=1)
    with open(os.path.join(ckpt_dir, "hf_assets", "config.json")) as f:
        preset = preset_from_hf_config(json.load(f))
    config = preset.transformer_config(tp=tp, ep=ep, etp=1, params_dtype=dtype,
                                       use_cpu_initialization=True)
    model = build_model(config, scheme, targets=targets, **preset.model_kwargs())
    state = dist_checkpointing.load(model.sharded_state_dict(), ckpt_dir,
                                    strict=StrictHandling.RAISE_ALL)
    model.load_state_dict(state)
    return model.eval()


def megatron_logits(rank, world_size, ckpt_dir, tokens, tp=1, ep=1, scheme="none",
                    targets="experts"):
    """Full-vocab fp32 logits [batch, seq, vocab] (gathered over TP)."""
    model = load_model(ckpt_dir, tp, ep, scheme, targets)
    positions = torch.arange(tokens.shape[1]).expand_as(tokens)
    with torch.no_grad():
        logits = model(tokens, positions, None)
        return gather_from_tensor_model_parallel_region(logits).clone()
