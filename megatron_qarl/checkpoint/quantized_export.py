"""Export a quantized HF checkpoint for SGLang/vLLM from a Megatron checkpoint.

Each quantized Megatron weight (an expert's fc1 = [gate; up] and fc2, and with attention
linear_qkv and linear_proj) is quantized in Megatron's layout by the scheme's own
`quantize_weight`, exactly as the learner's weight cache does, and only then cut into its HF
parts: codes and scales are split along the output rows, so the exported tensors are the
learner's byte for byte (the layers' layout checks guarantee no scale block straddles a
q/k/v head or the gate/up halves; the split checks it again here).
"""
from __future__ import annotations

import json
import os
import time
from typing import Dict, Optional

import torch
from tqdm import tqdm

from ..quant.rows import ReshardError, split_grouped_qkv, split_rows
from ..quant import (FP8Block, QuantizationError, QuantizedWeight, W4A16, get_scheme,
                     quantization_config, to_serving)
from .convert import ConversionReport
from .errors import CheckpointError
from .hf_config import CONFIG_FILE, Qwen3MoeDims
from .megatron_checkpoint import MegatronCheckpoint, copy_hf_assets
from .megatron_layout import EXPERTS, Chunk, hf_from_chunk, layer_chunks, top_chunks
from .paths import new_output, require_new_output
from .safetensors_io import DEFAULT_SHARD_BYTES, ShardedSafetensorsWriter

ATTENTION_KEYS = ("decoder.layers.self_attention.linear_qkv.weight",
                  "decoder.layers.self_attention.linear_proj.weight")


def _is_target(chunk: Chunk, quantize_attention: bool) -> bool:
    return EXPERTS in chunk.key or (quantize_attention and chunk.key in ATTENTION_KEYS)


def _check_shapes(ckpt: MegatronCheckpoint, quant, quantize_attention: bool) -> None:
    """Every weight to quantize fits the scheme, and each fused one splits into its HF parts
    (a zero weight of its shape through split_quantized), before anything is written (the
    scheme's own message names the trainer's flags)."""
    split_checked = set()
    for chunk in top_chunks(ckpt.dims) + layer_chunks(ckpt.dims, 0):
        if not _is_target(chunk, quantize_attention):
            continue
        out_features, in_features = chunk.global_shape[-2:]
        try:
            quant.validate_shape(chunk.key, out_features, in_features)
        except QuantizationError:
            group = getattr(quant, "group_size", None)
            raise CheckpointError(
                f"--scheme {quant.name}: {'/'.join(chunk.hf_names[:1])} and the like have "
                f"{in_features} input columns, which groups of {group} do not divide; export "
                f"with a smaller group (--scheme w4a16-g64 or w4a16-g32)"
                f"{' or without --quantize-attention' if quantize_attention else ''}"
            ) from None
        if chunk.fused is not None and chunk.key not in split_checked:
            split_checked.add(chunk.key)
            split_quantized(chunk, quant.quantize_weight(torch.zeros(chunk.tensor_shape)),
                            ckpt.dims)


def split_quantized(chunk: Chunk, qweight: QuantizedWeight,
                    dims: Qwen3MoeDims) -> Dict[str, QuantizedWeight]:
    """{hf linear prefix: QuantizedWeight} of one quantized Megatron weight."""
    prefixes = [n[: -len(".weight")] for n in chunk.hf_names]
    if chunk.fused is None:
        return {prefixes[0]: qweight}
    try:
        if chunk.fused == "qkv":
            parts = split_grouped_qkv(qweight, dims.num_kv_heads, dims.heads_per_group,
                                      dims.head_dim)
        else:
            parts = split_rows(qweight, [qweight.shape[-2] // 2] * 2)
    except ReshardError as e:
        raise CheckpointError(f"{chunk.key}: {e}; this model cannot be exported in this format "
                              f"(the learner rejects the same layout)") from e
    return {p: QuantizedWeight(q.data.contiguous(), q.scale.contiguous(), q.shape, q.scheme)
            for p, q in zip(prefixes, parts)}


def export_quantized(ckpt_dir: str, out_dir: str, scheme: str = "w4a16",
                     quantize_attention: Optional[bool] = None,
                     hf_config_dir: Optional[str] = None,
                     max_shard_bytes: int = DEFAULT_SHARD_BYTES,
                     progress: bool = True) -> ConversionReport:
    """Write an HF checkpoint whose experts (and attention, if asked) are quantized with
    `scheme` ('w4a16', 'w4a16-g64', 'w4a16-g32' or 'fp8-block'), with config.json's
    quantization_config. W4A16 keeps attention in bf16 unless quantize_attention (what
    SGLang can update in place); FP8 block always quantizes attention (its config says so)."""
    try:
        quant = get_scheme(scheme)
    except QuantizationError:
        quant = None
    if not isinstance(quant, (W4A16, FP8Block)):
        raise CheckpointError(f"--scheme {scheme}: export supports w4a16[-g64|-g32] and "
                              f"fp8-block; for a bf16 checkpoint use megatron-to-hf")
    if isinstance(quant, FP8Block):
        if quantize_attention is False:
            raise CheckpointError("--scheme fp8-block quantizes attention (SGLang's fp8 config "
                                  "converts every linear but the router); drop "
                                  "--no-quantize-attention")
        quantize_attention = True
    quantize_attention = bool(quantize_attention)
    require_new_output(out_dir)
    ckpt = MegatronCheckpoint(ckpt_dir, hf_config_dir)
    _check_shapes(ckpt, quant, quantize_attention)
    start = time.perf_counter()
    with new_output(out_dir) as partial, tqdm(
            total=ckpt.nbytes(), unit="B", unit_scale=True, desc=f"export {quant.name}",
            disable=not progress) as bar:
        writer = ShardedSafetensorsWriter(partial, max_shard_bytes)
        for _label, group in ckpt.groups():
            for chunk, data in group:
                if _is_target(chunk, quantize_attention):
                    qweight = quant.quantize_weight(data, "+".join(chunk.hf_names))
                    tensors = to_serving(split_quantized(chunk, qweight, ckpt.dims))
                else:
                    tensors = hf_from_chunk(chunk, data, ckpt.dims)
                for tensor_name, tensor in tensors.items():
                    writer.add(tensor_name, tensor)
                bar.update(data.numel() * data.element_size())
        writer.close()
        copy_hf_assets(ckpt.assets, partial)
        config = dict(ckpt.config)
        config["quantization_config"] = quantization_config(quant, quantize_attention)
        with open(os.path.join(partial, CONFIG_FILE), "w") as f:
            json.dump(config, f, indent=2)
    return ConversionReport(writer.total_bytes, time.perf_counter() - start)
