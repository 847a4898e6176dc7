"""HF safetensors <-> Megatron distributed checkpoint, streaming.

HF -> Megatron: each Megatron chunk (one layer's tensor, or one expert's) is read from the
safetensors files and merged when the checkpoint writer asks for it. Megatron -> HF: one
decoder layer is loaded, split into HF tensors and handed to a shard writer. Both check the
whole input (names, shapes, file lengths, config) before writing anything.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Optional

from tqdm import tqdm

from .dist_writer import save_lazily
from .errors import CheckpointError
from .hf_config import CONFIG_FILE, dims_from_config, read_config, validate_layout
from .megatron_checkpoint import HF_ASSETS, MegatronCheckpoint, copy_hf_assets
from .megatron_layout import all_chunks, chunk_from_hf, extra_states, hf_from_chunk
from .paths import new_output, require_new_output
from .safetensors_io import DEFAULT_SHARD_BYTES, SafetensorsCheckpoint, ShardedSafetensorsWriter


@dataclass(frozen=True)
class ConversionReport:
    bytes: int
    seconds: float

    @property
    def gb_per_s(self) -> float:
        return self.bytes / 1e9 / self.seconds if self.seconds else float("inf")


def hf_to_megatron(hf_dir: str, out_dir: str, tensor_parallel: int = 1,
                   expert_parallel: int = 1, progress: bool = True) -> ConversionReport:
    """Write `out_dir` as a Megatron torch_dist checkpoint of the HF model in `hf_dir`.

    The checkpoint loads at any TP/EP; `tensor_parallel`/`expert_parallel` only check up
    front that the layout you plan to train with can load this model."""
    require_new_output(out_dir)
    config = read_config(hf_dir)
    if "quantization_config" in config:
        method = config["quantization_config"].get("quant_method", "quantized")
        raise CheckpointError(
            f"{hf_dir}/{CONFIG_FILE}: a {method} checkpoint (quantization_config); convert "
            f"the bf16 model it was made from (its codes would be read as weights and its "
            f"scales dropped)")
    dims = dims_from_config(config, os.path.join(hf_dir, CONFIG_FILE))
    validate_layout(dims, tensor_parallel, expert_parallel)
    reader = SafetensorsCheckpoint(hf_dir)
    # a tied model's lm_head copy, and rotary tables older exports kept, are not weights
    reader.check(dims.hf_shapes(), f"the Qwen3-MoE model of {hf_dir}/{CONFIG_FILE}",
                 may_hold=("rotary_emb.inv_freq",)
                 + (("lm_head.weight",) if dims.tied_embeddings else ()))
    chunks = all_chunks(dims)
    dtypes = []
    for chunk in chunks:
        kinds = {reader.torch_dtype(n) for n in chunk.hf_names}
        if len(kinds) != 1:
            raise CheckpointError(f"{hf_dir}: {', '.join(chunk.hf_names)} have different "
                                  f"dtypes {kinds}; they must share one to be fused")
        dtypes.append(kinds.pop())
    total = sum(c.numel * d.itemsize for c, d in zip(chunks, dtypes))
    bar = tqdm(total=total, unit="B", unit_scale=True, desc="hf -> megatron",
               disable=not progress)

    def maker(chunk):
        def make():
            data = chunk_from_hf(chunk, reader.get_many(chunk.hf_names), dims)
            bar.update(data.numel() * data.element_size())
            return data
        return make

    start = time.perf_counter()
    with new_output(out_dir) as partial:
        save_lazily(partial, chunks, dtypes, [maker(c) for c in chunks], extra_states(dims))
        copy_hf_assets(hf_dir, os.path.join(partial, HF_ASSETS))
    bar.close()
    return ConversionReport(total, time.perf_counter() - start)


def megatron_to_hf(ckpt_dir: str, out_dir: str, hf_config_dir: Optional[str] = None,
                   max_shard_bytes: int = DEFAULT_SHARD_BYTES,
                   progress: bool = True) -> ConversionReport:
    """Write `out_dir` as an HF safetensors checkpoint (the checkpoint's dtype, bf16 when it
    came from HF) with config.json and the other HF files."""
    require_new_output(out_dir)
    ckpt = MegatronCheckpoint(ckpt_dir, hf_config_dir)
    start = time.perf_counter()
    dtypes = set()
    with new_output(out_dir) as partial, tqdm(
            total=ckpt.nbytes(), unit="B", unit_scale=True, desc="megatron -> hf",
            disable=not progress) as bar:
        writer = ShardedSafetensorsWriter(partial, max_shard_bytes)
        for _label, group in ckpt.groups():
            for chunk, data in group:
                for name, tensor in hf_from_chunk(chunk, data, ckpt.dims).items():
                    writer.add(name, tensor)
                    dtypes.add(tensor.dtype)
                bar.update(data.numel() * data.element_size())
        writer.close()
        copy_hf_assets(ckpt.assets, partial)
        _describe_dense_weights(os.path.join(partial, CONFIG_FILE), dtypes)
    return ConversionReport(writer.total_bytes, time.perf_counter() - start)


def _describe_dense_weights(path: str, dtypes: set) -> None:
    """config.json says what was written: dense weights (no quantization_config) of their
    dtype (an fp32 training checkpoint was labelled bfloat16, and `dtype="auto"` loaders
    downcast it)."""
    config = read_config(os.path.dirname(path), os.path.basename(path))
    config.pop("quantization_config", None)
    if len(dtypes) == 1:
        name = str(next(iter(dtypes))).replace("torch.", "")
        config["torch_dtype"] = name
        if "dtype" in config:  # transformers 5's name for it
            config["dtype"] = name
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
