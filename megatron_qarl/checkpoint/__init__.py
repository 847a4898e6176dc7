"""Checkpoint conversion for Qwen3-MoE: HF safetensors <-> Megatron distributed checkpoints
(any TP/EP), quantized export for SGLang/vLLM, inspect and compare. Streaming: one decoder
layer (or one chunk) in memory at a time. The Megatron <-> HF name mapping (`hf_names`) and
the fused-tensor splits (`fused_tensors`) are shared with the SGLang weight publisher.
"""
from .convert import ConversionReport, hf_to_megatron, megatron_to_hf
from .errors import CheckpointError
from .quantized_export import export_quantized
from .tensor_sources import compare, inspect_rows

__all__ = ["ConversionReport", "hf_to_megatron", "megatron_to_hf", "export_quantized",
           "CheckpointError", "compare", "inspect_rows"]
