"""Fixes megatron-core 0.16.1 needs on machines without TransformerEngine or Apex (CPU CI and
the GPU machine here alike). Each fix says why; all are idempotent."""
from __future__ import annotations

import torch


def apply_megatron_fixes() -> None:
    """0.16.1's moe_utils imports `te_general_gemm` inside a try block and leaves the name
    undefined when TE is missing, so every MoE router forward raises NameError (fixed in 0.19).
    None is the value its own code tests for to take the torch path."""
    from megatron.core.transformer.moe import moe_utils, token_dispatcher

    if not hasattr(moe_utils, "te_general_gemm"):
        moe_utils.te_general_gemm = None
    if not getattr(token_dispatcher.sort_chunks_by_idxs, "skips_identity", False):
        token_dispatcher.sort_chunks_by_idxs = _skip_identity_sort(
            token_dispatcher.sort_chunks_by_idxs)


def _skip_identity_sort(sort_chunks_by_idxs):
    """The all-to-all dispatcher re-sorts its chunks by local expert around every expert
    forward. At TP x EP = 1 the order is already expert-major, and the unfused path (no TE)
    still splits the tokens into one view per expert and concatenates them again: 2 x 128
    splits and copies per MoE layer, ~1.9 ms of host time per decode step of 3 Qwen3-30B-A3B
    layers (tools/profile_embedded_decode.py). The index tensor is on the CPU there."""

    def sort(input, split_sizes, sorted_idxs, probs=None, fused=False):
        identity = torch.arange(len(sorted_idxs), dtype=sorted_idxs.dtype)
        if not sorted_idxs.is_cuda and torch.equal(sorted_idxs, identity):
            return input, probs
        return sort_chunks_by_idxs(input, split_sizes, sorted_idxs, probs=probs, fused=fused)

    sort.skips_identity = True
    return sort

