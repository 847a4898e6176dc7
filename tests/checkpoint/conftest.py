"""A tiny random transformers Qwen3-MoE checkpoint and its Megatron conversion, shared by
the checkpoint tests (each built once per session)."""
# transformers first: megatron_qarl.compat.cpu_testing replaces torch.cuda.Stream, and
# transformers' generation modules use it in annotations evaluated at import.
import transformers.quantizers.auto  # noqa: F401
from transformers import Qwen3MoeForCausalLM  # noqa: F401

import pytest

from megatron_qarl.checkpoint import hf_to_megatron
from tiny_hf import hf_logits, save_tiny_hf, tokens


@pytest.fixture(scope="session")
def hf_dir(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("hf"))
    save_tiny_hf(path)
    return path


@pytest.fixture(scope="session")
def megatron_dir(hf_dir, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("megatron"))
    hf_to_megatron(hf_dir, path, progress=False)
    return path


@pytest.fixture(scope="session")
def toks():
    return tokens()


@pytest.fixture(scope="session")
def reference_logits(hf_dir, toks):
    """transformers' fp32 logits of the original checkpoint."""
    return hf_logits(hf_dir, toks)
