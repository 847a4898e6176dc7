"""Prompt data for RL: tokenizers, templates, datasets, synthetic tasks, resumable order."""
from .arithmetic import arithmetic_rows
from .datasets import DatasetError, PromptRow, build_prompts, read_rows
from .order import PromptOrder
from .templates import TEMPLATE_NAMES, check_template, render_prompt
from .tokenizers import CharTokenizer, HFTokenizer, Tokenizer, build_tokenizer

__all__ = [
    "arithmetic_rows", "DatasetError", "PromptRow", "build_prompts", "read_rows",
    "PromptOrder", "TEMPLATE_NAMES", "check_template", "render_prompt", "CharTokenizer",
    "HFTokenizer", "Tokenizer", "build_tokenizer",
]
