"""The learner's vocabulary rows: the pretrained model's for an HF tokenizer (so HF checkpoints
load and exports serve with the same shapes), a compact padded one for the char tokenizer; and
the HF config a checkpoint carries for the export tools."""
import json
from types import SimpleNamespace

import pytest

from megatron_qarl.checkpoint.hf_config import dims_from_config
from megatron_qarl.trainer.checkpointing import write_hf_assets
from megatron_qarl.trainer.models import model_vocab_rows
from megatron_qarl.trainer.validation import FlagError


def _args(**kw):
    base = dict(tokenizer_type="hf", model="qwen3-30b-a3b", tensor_model_parallel_size=8,
                make_vocab_size_divisible_by=128)
    return SimpleNamespace(**{**base, **kw})


def test_hf_tokenizer_keeps_the_checkpoint_rows():
    assert model_vocab_rows(_args(), 151669) == 151936  # Qwen3's tokenizer vs its checkpoint


def test_char_tokenizer_is_padded_to_tp_times_the_multiple():
    assert model_vocab_rows(_args(tokenizer_type="char", tensor_model_parallel_size=2), 97) == 256


def test_tokenizer_larger_than_the_model_is_refused():
    with pytest.raises(FlagError, match="--tokenizer-model has 200000 tokens.*151936"):
        model_vocab_rows(_args(), 200000)


def test_rows_not_divisible_by_tp_are_refused():
    with pytest.raises(FlagError, match="not divisible by --tensor-model-parallel-size 5"):
        model_vocab_rows(_args(tensor_model_parallel_size=5), 151669)


def test_a_checkpoints_hf_config_is_the_saved_models_with_the_tokenizers_files(tmp_path):
    """The tokenizer folder's files come along and its config.json keeps its other fields;
    the dimensions and rows are the trained model's."""
    tokenizer = tmp_path / "tok"
    tokenizer.mkdir()
    (tokenizer / "tokenizer.json").write_text("{}")
    (tokenizer / "model.safetensors").write_text("weights")  # not an asset
    (tokenizer / "config.json").write_text(json.dumps({"vocab_size": 7, "bos_token_id": 3}))
    model = {"model_type": "qwen3_moe", "num_hidden_layers": 2, "hidden_size": 64,
             "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
             "moe_intermediate_size": 32, "num_experts": 4, "num_experts_per_tok": 2,
             "vocab_size": 256, "tie_word_embeddings": False, "norm_topk_prob": True}
    write_hf_assets(str(tmp_path / "ckpt"), model, str(tokenizer))
    assets = tmp_path / "ckpt" / "hf_assets"
    assert sorted(p.name for p in assets.iterdir()) == ["config.json", "tokenizer.json"]
    written = json.loads((assets / "config.json").read_text())
    assert written == {**model, "bos_token_id": 3}
    assert dims_from_config(written).vocab == 256
