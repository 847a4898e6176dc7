"""Any checkpoint these tools handle, read as dense HF-named tensors one group (layer) at a
time: HF bf16, HF quantized (dequantized through the scheme that wrote it) and Megatron.
`inspect` lists what is stored; `compare` diffs two checkpoints tensor by tensor."""
from __future__ import annotations

import os
from typing import Dict, Iterator, List, Optional, Tuple

import torch

from ..quant import FP8Block, QuantScheme, W4A16, quantization_config
from ..quant.w4a16 import GROUP_SIZES
from .dist_reader import checkpoint_tensors
from .errors import CheckpointError
from .hf_config import CONFIG_FILE, Qwen3MoeDims, dims_from_config, read_config
from .hf_names import checkpoint_order, hf_layer_names, hf_top_names
from .megatron_checkpoint import MegatronCheckpoint
from .megatron_layout import hf_from_chunk
from .paths import is_megatron
from .safetensors_io import SafetensorsCheckpoint

Group = Tuple[str, Dict[str, torch.Tensor]]
#: tensor-name suffixes of one quantized linear, over the supported serving formats
SERVING_SUFFIXES = (".weight_packed", ".weight_scale", ".weight_shape", ".weight",
                    ".weight_scale_inv")
#: a linear is stored quantized when one of these is present (FP8 keeps the name .weight)
SCALE_SUFFIXES = (".weight_scale", ".weight_scale_inv")


def scheme_of(config: dict, path: str) -> QuantScheme | None:
    """The scheme a quantization_config was written for (None: a dense checkpoint)."""
    qc = config.get("quantization_config")
    if qc is None:
        return None
    if qc.get("quant_method") == "compressed-tensors" and qc.get("format") == "pack-quantized":
        return _w4a16_of(qc, path)
    if qc.get("quant_method") == "fp8" and qc.get("weight_block_size") == [128, 128]:
        return FP8Block()
    raise CheckpointError(f"{path}: quantization_config {qc.get('quant_method')!r} "
                          f"({qc.get('format', qc.get('fmt'))}) is not one these tools wrote")


def _w4a16_of(qc: dict, path: str) -> W4A16:
    """The W4A16 scheme of a pack-quantized config, only where its weights are ours: one group
    of symmetric int4 weights, no activation order. Another (asymmetric: zero points) would
    dequantize wrong without a word."""
    groups = list((qc.get("config_groups") or {}).values())
    weights = (groups[0].get("weights") or {}) if len(groups) == 1 else {}
    written = quantization_config(W4A16(GROUP_SIZES[-1]))["config_groups"]["group_0"]["weights"]
    ours = {k: written[k] for k in ("num_bits", "type", "symmetric", "strategy", "actorder")}
    differ = [f"{k}={weights.get(k)!r}" for k, v in ours.items() if weights.get(k) != v]
    if len(groups) != 1 or differ:
        what = f"{len(groups)} config groups" if len(groups) != 1 else ", ".join(differ)
        raise CheckpointError(f"{path}: a compressed-tensors config these tools did not write "
                              f"({what}); they read one group of symmetric int4 weights in "
                              f"groups, no activation order (tools/checkpoint.py export)")
    group_size = weights.get("group_size")
    if group_size not in GROUP_SIZES:
        raise CheckpointError(f"{path}: W4A16 group_size {group_size!r}; these tools write "
                              f"{', '.join(map(str, GROUP_SIZES))}")
    return W4A16(group_size)


class HFSource:
    def __init__(self, directory: str):
        self.config = read_config(directory)
        self.config_path = os.path.join(directory, CONFIG_FILE)
        self.dims = dims_from_config(self.config, self.config_path)
        self.scheme = scheme_of(self.config, self.config_path)
        self.reader = SafetensorsCheckpoint(directory)

    def dense(self, name: str) -> torch.Tensor:
        prefix = name[: -len(".weight")]
        if not any(prefix + s in self.reader.file_of for s in SCALE_SUFFIXES):
            return self.reader.get(name)
        if self.scheme is None:
            raise CheckpointError(
                f"{self.config_path}: no quantization_config, but tensor {prefix!r} is stored "
                f"quantized; restore the config.json written by `tools/checkpoint.py export`")
        parts = {prefix + s: self.reader.get(prefix + s) for s in SERVING_SUFFIXES
                 if prefix + s in self.reader.file_of}
        return self.scheme.from_serving_tensors(prefix, parts).dequantize()

    def groups(self) -> Iterator[Group]:
        dims = self.dims
        for label, names in checkpoint_order(hf_top_names(dims.tied_embeddings),
                                             lambda i: hf_layer_names(i, dims.num_experts),
                                             dims.num_layers):
            yield label, {n: self.dense(n) for n in names}


class MegatronSource:
    def __init__(self, directory: str, hf_config_dir: Optional[str] = None):
        self.ckpt = MegatronCheckpoint(directory, hf_config_dir)
        self.dims: Qwen3MoeDims = self.ckpt.dims

    def groups(self) -> Iterator[Group]:
        for label, chunks in self.ckpt.groups():
            tensors = {}
            for chunk, data in chunks:
                tensors.update(hf_from_chunk(chunk, data, self.dims))
            yield label, tensors


def open_source(path: str, hf_config_dir: Optional[str] = None):
    """hf_config_dir: the config.json of a Megatron checkpoint without hf_assets/."""
    return MegatronSource(path, hf_config_dir) if is_megatron(path) else HFSource(path)


def inspect_rows(path: str) -> Tuple[str, List[Tuple[str, str, Tuple[int, ...]]]]:
    """(format description, [(stored tensor name, dtype, shape)]) without reading data."""
    if is_megatron(path):
        tensors = checkpoint_tensors(path)
        rows = [(k, str(d).replace("torch.", ""), s) for k, (d, s) in sorted(tensors.items())]
        return "Megatron-Core distributed checkpoint (torch_dist, any TP/EP)", rows
    config = read_config(path)
    reader = SafetensorsCheckpoint(path)
    rows = [(n, *reader.dtype_and_shape(n)) for n in reader.names()]
    if "quantization_config" not in config:
        return "HF safetensors, dense", rows
    method = config["quantization_config"].get("quant_method")
    try:  # the headers need no scheme: one these tools did not write is listed too
        scheme = scheme_of(config, os.path.join(path, CONFIG_FILE)).name
    except CheckpointError:
        scheme = "a layout these tools did not write; compare cannot dequantize it"
    return f"HF safetensors, quantized ({method}: {scheme})", rows


def compare(path_a: str, path_b: str,
            hf_config_dir: Optional[str] = None) -> Iterator[Tuple[str, str, str, float]]:
    """(HF name, dtype in a, dtype in b, max |a - b|) per tensor, quantized checkpoints
    dequantized; raises if the two are different models."""
    a, b = open_source(path_a, hf_config_dir), open_source(path_b, hf_config_dir)
    if a.dims != b.dims:
        raise CheckpointError(f"{path_a} and {path_b} are different models: {a.dims} vs "
                              f"{b.dims}")
    for (_, ta), (_, tb) in zip(a.groups(), b.groups()):
        for name, x in ta.items():
            y = tb[name]
            diff = (x.float() - y.float()).abs().max().item() if x.numel() else 0.0
            yield name, str(x.dtype).replace("torch.", ""), str(y.dtype).replace("torch.", ""), diff
