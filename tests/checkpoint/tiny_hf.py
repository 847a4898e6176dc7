"""A tiny random Qwen3-MoE saved by transformers: the independent implementation the
conversions are checked against. Its dims are the tiny preset's (head_dim and expert width
128, so FP8 blocks and W4A16 groups fit; 4 heads / 2 KV groups / 4 experts split over 2)."""
import json
import os

import torch
from transformers import CompressedTensorsConfig, Qwen3MoeConfig, Qwen3MoeForCausalLM

from megatron_qarl.checkpoint.model_preset import hf_config_from_preset
from megatron_qarl.models import QWEN3_MOE_TINY as P

SEQ, BATCH = 16, 2


def tiny_hf_config() -> Qwen3MoeConfig:
    fields = hf_config_from_preset(P)
    fields.pop("model_type")
    return Qwen3MoeConfig(**fields)


def save_tiny_hf(path: str, seed: int = 0) -> None:
    """bf16 weights in several shards with an index; norms random too, so a norm that lands
    in the wrong place changes the logits."""
    torch.manual_seed(seed)
    model = Qwen3MoeForCausalLM(tiny_hf_config())
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
    model.to(torch.bfloat16).save_pretrained(path, max_shard_size="300KB")


def tokens(seed: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, P.vocab_size, (BATCH, SEQ), generator=g)


def hf_logits(path: str, toks: torch.Tensor) -> torch.Tensor:
    """fp32 logits of a checkpoint loaded by transformers, W4A16 decompressed to dense bf16 by
    compressed-tensors at load (bf16(code * scale), as SGLang's kernel forms weights), then
    upcast exactly. (transformers refuses `.float()` on a quantized model to protect
    still-compressed weights; these are dense after decompression, so torch's applies.)"""
    with open(os.path.join(path, "config.json")) as f:
        quantized = "quantization_config" in json.load(f)
    extra = {"quantization_config": CompressedTensorsConfig(run_compressed=False)} \
        if quantized else {}
    model = Qwen3MoeForCausalLM.from_pretrained(path, dtype=torch.bfloat16, **extra)
    model = torch.nn.Module.float(model)
    with torch.no_grad():
        return model(toks).logits
