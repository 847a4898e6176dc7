"""Megatron's core attention through torch's `scaled_dot_product_attention`
(`--attention-backend sdpa`).

Megatron's local `DotProductAttention` builds the [batch, heads, sq, sk] scores and keeps the
probabilities for backward: with 32 heads and a 4k-token sequence that is 2 GiB a layer in
bf16, and it grows with the square of the length (at 4096-token responses the 3-layer
Qwen3-30B-A3B reduction ran out of memory in it on an H100). SDPA's flash and
memory-efficient kernels keep memory linear in the sequence. TransformerEngine's attention
does the same, where it is installed; this backend needs only torch.

Masks follow TransformerEngine's contract: a causal layer with as many queries as keys runs
causal and ignores the mask tensor; otherwise the mask tensor Megatron passes (True: masked)
is applied as given, which is how the rollout engine's windows over its KV cache stay exact.
With a mask, each KV head's query heads are folded into rows of one query: SDPA's kernels for
masks would otherwise copy the KV heads to every query head over all keys (on an H100, decode
attention over 4096 keys: 6.4 ms copied, 0.2 ms folded; docs/training.md).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from megatron.core.transformer.dot_product_attention import DotProductAttention
from megatron.core.transformer.enums import AttnMaskType
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.bias import causal_lower_right

ATTENTION_BACKENDS = ("local", "sdpa")
# Not cuDNN's: it builds a plan for every new shape, and each decode step has a new key length
# (on an H100 the first 2048-token rollout took 155 s against 22 s once the plans existed).
_KERNELS = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
BACKEND_FLAG = "--attention-backend"


class SDPAttention(DotProductAttention):
    """DotProductAttention's interface, heads and softmax scale; SDPA's kernels."""

    def __init__(self, config, layer_number, attn_mask_type, attention_type,
                 attention_dropout=None, softmax_scale=None, **kwargs):
        dropout = config.attention_dropout if attention_dropout is None else attention_dropout
        refused = [what for what, bad in (
            (f"attention dropout {dropout}", dropout > 0),
            (f"softmax_type {config.softmax_type!r}", config.softmax_type != "vanilla"),
            ("window attention", config.window_size is not None),
        ) if bad]
        if refused:
            raise ValueError(f"{BACKEND_FLAG} sdpa does not support {', '.join(refused)}; use "
                             f"{BACKEND_FLAG} local")
        super().__init__(config, layer_number, attn_mask_type, attention_type,
                         attention_dropout, softmax_scale, **kwargs)
        if config.apply_query_key_layer_scaling:  # undo the fp16 coefficient: SDPA has none
            self.softmax_scale *= self.layer_number

    def forward(self, query, key, value, attention_mask, attn_mask_type=None,
                attention_bias=None, packed_seq_params=None):
        if attention_bias is not None or packed_seq_params is not None:
            raise ValueError(f"{BACKEND_FLAG} sdpa takes neither attention bias nor packed "
                             f"sequences; use {BACKEND_FLAG} local")
        mask_type = self.attn_mask_type if attn_mask_type is None else attn_mask_type
        sq, batch, heads, head_dim = query.shape
        sk = key.shape[0]
        causal = mask_type == AttnMaskType.causal and sq == sk
        mask = None
        if not causal and attention_mask is not None:
            mask = ~attention_mask
        elif not causal and mask_type == AttnMaskType.causal:
            mask = causal_lower_right(sq, sk)
        # [s, b, heads, d] -> [b, heads, s, d]
        q, k, v = (t.permute(1, 2, 0, 3) for t in (query, key, value))
        kv_heads = k.shape[1]
        group = heads // kv_heads
        fold = isinstance(mask, torch.Tensor) and group > 1
        if fold:
            # a mask rules flash out, and the other kernels would copy every KV head to each
            # of its query heads over all keys (the decode engine's cost at long responses):
            # instead each KV head's query heads become rows of one query (the heads of a
            # group are contiguous, as in Megatron's and SDPA's GQA)
            q = q.reshape(batch, kv_heads, group * sq, head_dim)
            mask = mask.expand(mask.shape[0], 1, sq, sk).repeat(1, 1, group, 1)
        with sdpa_kernel(_KERNELS):
            context = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, is_causal=causal, scale=self.softmax_scale,
                enable_gqa=group > 1 and not fold)
        context = context.reshape(batch, heads, sq, head_dim)
        return context.permute(2, 0, 1, 3).reshape(sq, batch, heads * head_dim)
