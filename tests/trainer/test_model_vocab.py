"""The learner's vocabulary rows: the pretrained model's for an HF tokenizer (so HF checkpoints
load and exports serve with the same shapes), a compact padded one for the char tokenizer."""
from types import SimpleNamespace

import pytest

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
