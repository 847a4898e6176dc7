"""Tokenizers the trainer accepts: a local Hugging Face tokenizer, or a built-in character
tokenizer so the synthetic tasks run without downloading anything."""
from __future__ import annotations

import json
import os
import string
from typing import List, Optional, Protocol, Tuple

from .datasets import DatasetError

GENERATION_CONFIG = "generation_config.json"


class Tokenizer(Protocol):
    vocab_size: int
    eos_id: int
    pad_id: int
    stop_ids: Tuple[int, ...]  # every id a rollout stops at (the eos first)

    def encode(self, text: str) -> List[int]: ...

    def decode(self, ids: List[int]) -> str: ...


class CharTokenizer:
    """One id per printable ASCII character plus <pad> (0) and <eos> (1).

    A response's final stop id is not text. Every other id outside the alphabet (<pad>, ids a
    padded model vocabulary can sample) decodes to U+FFFD, which the error-token detector
    counts and no reward matches, instead of vanishing or raising mid-rollout.
    """

    SPECIALS = ("<pad>", "<eos>")

    def __init__(self):
        self.alphabet = string.printable[:95] + "\n"  # 0-9a-zA-Z, punctuation, space, newline
        self._ids = {ch: i + len(self.SPECIALS) for i, ch in enumerate(self.alphabet)}
        self.pad_id, self.eos_id = 0, 1
        self.stop_ids = (self.eos_id,)
        self.vocab_size = len(self.SPECIALS) + len(self.alphabet)

    def encode(self, text: str) -> List[int]:
        try:
            return [self._ids[ch] for ch in text]
        except KeyError as err:
            raise ValueError(
                f"character {err.args[0]!r} is not in the built-in character tokenizer's "
                f"alphabet (printable ASCII); use --tokenizer-type hf --tokenizer-model PATH "
                f"for this data"
            ) from None

    def decode(self, ids: List[int]) -> str:
        ids = ids[:-1] if ids and ids[-1] in self.stop_ids else ids
        offset = len(self.SPECIALS)
        return "".join(self.alphabet[i - offset] if offset <= i < self.vocab_size else "\ufffd"
                       for i in ids)


class HFTokenizer:
    """A tokenizer saved on local disk (never fetched: runs must not depend on the network)."""

    def __init__(self, path: str):
        if not os.path.isdir(path):
            raise DatasetError(
                f"--tokenizer-model {path!r} is not a directory; pass the local folder that "
                f"holds tokenizer.json / tokenizer_config.json (download it beforehand)"
            )
        try:
            from transformers import AutoTokenizer
        except ImportError as e:
            raise DatasetError(f"--tokenizer-type hf needs transformers ({e}); install "
                               f"megatron-qarl[hf]") from None
        try:
            self.hf = AutoTokenizer.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError) as e:
            raise DatasetError(
                f"--tokenizer-model {path!r}: transformers could not load a tokenizer from it "
                f"({e}); pass the folder holding tokenizer.json / tokenizer_config.json, as "
                f"save_pretrained writes it") from None
        if self.hf.eos_token_id is None:
            raise DatasetError(f"--tokenizer-model {path!r}: the tokenizer defines no eos "
                               f"token; set eos_token in its tokenizer_config.json")
        self.eos_id = int(self.hf.eos_token_id)
        self.stop_ids = tuple(dict.fromkeys([self.eos_id, *_generation_eos_ids(path)]))
        pad = self.hf.pad_token_id
        self.pad_id = int(self.eos_id if pad is None else pad)
        self.vocab_size = len(self.hf)
        self.path = path

    def encode(self, text: str) -> List[int]:
        return list(self.hf.encode(text, add_special_tokens=False))

    def decode(self, ids: List[int]) -> str:
        """Special tokens are skipped, as SGLang's detokenizer does; an id past the
        tokenizer's vocabulary (a padded model vocabulary samples them), which transformers
        drops silently, decodes to U+FFFD as in CharTokenizer."""
        pieces, run = [], []
        for i in ids:
            if 0 <= i < self.vocab_size:
                run.append(i)
            else:
                pieces += [self.hf.decode(run, skip_special_tokens=True), "\ufffd"]
                run = []
        return "".join(pieces) + self.hf.decode(run, skip_special_tokens=True)

    def apply_chat_template(self, user_text: str) -> str:
        if not getattr(self.hf, "chat_template", None):
            raise DatasetError(f"--prompt-template chat-boxed: the tokenizer in {self.path!r} "
                               f"has no chat template (tokenizer_config.json's chat_template); "
                               f"use --prompt-template boxed or a format string")
        return self.hf.apply_chat_template(
            [{"role": "user", "content": user_text}], tokenize=False, add_generation_prompt=True
        )


def _generation_eos_ids(path: str) -> List[int]:
    """generation_config.json's eos_token_id (an id or a list): SGLang and HF generate() stop
    at these as well as at the tokenizer's eos (Qwen3: <|im_end|> and <|endoftext|>), so the
    embedded engine does too."""
    config = os.path.join(path, GENERATION_CONFIG)
    if not os.path.isfile(config):
        return []
    try:
        with open(config) as f:
            eos = json.load(f).get("eos_token_id")
    except (json.JSONDecodeError, AttributeError) as err:
        raise DatasetError(f"{config}: not a JSON object ({err}); fix it or remove it (the "
                           f"eos it names is where rollouts stop)") from None
    if eos is None:
        return []
    return [int(i) for i in (eos if isinstance(eos, list) else [eos])]


def build_tokenizer(tokenizer_type: str, tokenizer_model: Optional[str]) -> Tokenizer:
    if tokenizer_type == "char":
        return CharTokenizer()
    if tokenizer_type == "hf":
        return HFTokenizer(tokenizer_model)
    raise ValueError(f"--tokenizer-type must be 'char' or 'hf', got {tokenizer_type!r}")
