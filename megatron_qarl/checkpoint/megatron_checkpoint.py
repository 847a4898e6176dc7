"""A Megatron distributed checkpoint of a Qwen3-MoE model, read one decoder layer at a time.

The HF config.json (and tokenizer files) travel with the checkpoint in `hf_assets/`, written
by the HF -> Megatron conversion, so converting back and exporting need no other input.
"""
from __future__ import annotations

import os
import shutil
from typing import Iterator, List, Optional, Tuple

import torch

from .dist_reader import checkpoint_tensors, load_chunks
from .errors import CheckpointError
from .hf_config import CONFIG_FILE, Qwen3MoeDims, dims_from_config, read_config
from .hf_names import checkpoint_order
from .megatron_layout import Chunk, layer_chunks, top_chunks

HF_ASSETS = "hf_assets"
#: files of an HF checkpoint directory that are weights (everything else is an asset)
WEIGHT_SUFFIXES = (".safetensors", ".safetensors.index.json", ".bin", ".pt")


def copy_hf_assets(src: str, dst: str) -> None:
    """config.json, tokenizer and generation config: every file that is not a weight."""
    os.makedirs(dst, exist_ok=True)
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if os.path.isfile(path) and not name.endswith(WEIGHT_SUFFIXES):
            shutil.copy2(path, os.path.join(dst, name))


class MegatronCheckpoint:
    def __init__(self, directory: str, hf_config_dir: Optional[str] = None):
        self.directory = directory
        self.tensors = checkpoint_tensors(directory)  # first: is it a Megatron checkpoint
        self.assets = hf_config_dir or os.path.join(directory, HF_ASSETS)
        if not os.path.isfile(os.path.join(self.assets, CONFIG_FILE)):
            raise CheckpointError(
                f"{os.path.join(self.assets, CONFIG_FILE)}: not found; this checkpoint was "
                f"not written by `tools/checkpoint.py hf-to-megatron`: pass --hf-config with "
                f"the directory of the model's HF config.json"
            )
        self.config = read_config(self.assets)
        self.dims: Qwen3MoeDims = dims_from_config(
            self.config, os.path.join(self.assets, CONFIG_FILE))
        self._check_shapes()

    def _check_shapes(self) -> None:
        """Every key present with its global shape (layer 0's chunks cover all layer keys), and
        no untied lm_head under a tied config (it would be dropped)."""
        if self.dims.tied_embeddings and "output_layer.weight" in self.tensors:
            raise CheckpointError(
                f"{self.directory}: holds output_layer.weight (an lm_head of its own), but "
                f"{self.assets}/{CONFIG_FILE} ties it to the embedding (tie_word_embeddings), "
                f"which would drop it; pass the config the model was trained with")
        for chunk in top_chunks(self.dims) + layer_chunks(self.dims, 0):
            if chunk.key not in self.tensors:
                raise CheckpointError(
                    f"{self.directory}: tensor {chunk.key!r} (HF {chunk.hf_names[0]}) is "
                    f"missing; the checkpoint is incomplete or of another model"
                )
            _, shape = self.tensors[chunk.key]
            if shape != chunk.global_shape:
                raise CheckpointError(
                    f"{self.directory}: tensor {chunk.key!r} has global shape {list(shape)}, "
                    f"expected {list(chunk.global_shape)} from {self.assets}/{CONFIG_FILE}; "
                    f"the config belongs to another model size"
                )

    @property
    def dtypes(self):
        return {k: dtype for k, (dtype, _) in self.tensors.items()}

    def nbytes(self) -> int:
        """The model's bytes (a training checkpoint also holds the optimizer's state)."""
        keys = {c.key for c in top_chunks(self.dims) + layer_chunks(self.dims, 0)}
        return sum(torch.Size(s).numel() * d.itemsize
                   for k, (d, s) in self.tensors.items() if k in keys)

    def groups(self) -> Iterator[Tuple[str, List[Tuple[Chunk, torch.Tensor]]]]:
        """(label, [(chunk, data)]) for the embedding, each layer, then norm and lm_head:
        HF checkpoint order, one decoder layer in memory at a time."""
        dtypes = self.dtypes
        for label, chunks in checkpoint_order(top_chunks(self.dims),
                                              lambda i: layer_chunks(self.dims, i),
                                              self.dims.num_layers):
            yield label, list(zip(chunks, load_chunks(self.directory, chunks, dtypes)))
