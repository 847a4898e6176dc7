"""Checkpoint conversion for Qwen3-MoE: HF safetensors <-> Megatron distributed checkpoints
(any TP/EP), quantized export for SGLang/vLLM, inspect and compare. Streaming: one decoder
layer (or one chunk) in memory at a time. The Megatron <-> HF name mapping (`hf_names`) and
the fused-tensor splits (`fused_tensors`) are shared with the SGLang weight publisher.

The names below load their module on first use (PEP 562): the light modules (`hf_config`,
`paths`, `errors`) are imported by the trainer's flag parsing, which must not wait for
megatron-core.
"""
import importlib

_HOME = {"ConversionReport": "convert", "hf_to_megatron": "convert",
         "megatron_to_hf": "convert", "export_quantized": "quantized_export",
         "CheckpointError": "errors", "compare": "tensor_sources",
         "inspect_rows": "tensor_sources"}

__all__ = list(_HOME)


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
