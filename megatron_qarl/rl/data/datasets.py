"""Prompt datasets: rows {prompt, answer} from jsonl, parquet or a synthetic task, rendered
with a prompt template and tokenized once.

A malformed row stops the run before any work with the file and line (or parquet row) named.
"""
from __future__ import annotations

import codecs
import json
import math
import os
from dataclasses import dataclass
from typing import Dict, List, Optional

from .arithmetic import SYNTHETIC_PREFIX, TASKS, arithmetic_rows
from .templates import render_prompt


class DatasetError(ValueError):
    """A prompt file, or the tokenizer that reads it, cannot be used as given."""


@dataclass(frozen=True)
class PromptRow:
    prompt_ids: List[int]
    prompt_text: str
    answer: str


def _as_text(value):
    """A number as its text; a whole float as an integer: a parquet column of integers with a
    missing value reads as floats, and "2.0" never matches an answer of 2."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _check_row(row, where: str, prompt_key: str, answer_key: str) -> Dict[str, str]:
    """{"prompt", "answer", "where"}: where names the row in later errors."""
    if not isinstance(row, dict):
        raise DatasetError(f"{where}: expected a JSON object, got {type(row).__name__}")
    for key, flag in ((prompt_key, "--prompt-key"), (answer_key, "--answer-key")):
        if key not in row:
            raise DatasetError(
                f"{where}: no field {key!r} (fields: {', '.join(map(str, row)) or 'none'}); "
                f"fix the row or point {flag} at the right field"
            )
        value = _as_text(row[key])
        if not isinstance(value, str) or not value.strip():
            raise DatasetError(f"{where}: field {key!r} must be a non-empty string or a finite "
                               f"number, got {row[key]!r}")
        row[key] = value
    return {"prompt": row[prompt_key], "answer": row[answer_key], "where": where}


def _read_text(path: str) -> str:
    with open(path, "rb") as f:
        data = f.read()
    skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0  # not a row
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as err:
        at = skip + err.start
        line = data[:at].count(b"\n") + 1
        raise DatasetError(f"{path}:{line}: not UTF-8 text "
                           f"({err.reason} at byte {at}); convert the file to UTF-8") from None


def _read_json(path: str, prompt_key: str, answer_key: str) -> List[Dict[str, str]]:
    """A .json file: one array of objects, or JSON lines as a .jsonl."""
    text = _read_text(path)
    if not text.lstrip().startswith("["):
        return _read_jsonl(path, prompt_key, answer_key, text)
    try:
        table = json.loads(text)
    except json.JSONDecodeError as err:
        raise DatasetError(f"{path}: not valid JSON ({err.msg}, line {err.lineno})") from None
    return [_check_row(row, f"{path}: row {i}", prompt_key, answer_key)
            for i, row in enumerate(table, start=1)]


def _read_jsonl(path: str, prompt_key: str, answer_key: str,
                text: Optional[str] = None) -> List[Dict[str, str]]:
    rows = []
    for lineno, line in enumerate((_read_text(path) if text is None else text).splitlines(),
                                  start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise DatasetError(f"{path}:{lineno}: not valid JSON ({err.msg}); a .jsonl holds "
                               f"one JSON object a line, a .json an array of them") from None
        rows.append(_check_row(row, f"{path}:{lineno}", prompt_key, answer_key))
    return rows


def _read_parquet(path: str, prompt_key: str, answer_key: str) -> List[Dict[str, str]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DatasetError(
            f"{path}: reading parquet needs pyarrow (pip install megatron-qarl[parquet]), or "
            f"convert the file to jsonl"
        ) from None
    table = pq.read_table(path).to_pylist()
    return [_check_row(row, f"{path}: row {i}", prompt_key, answer_key)
            for i, row in enumerate(table, start=1)]


def read_rows(source: str, prompt_key: str = "prompt", answer_key: str = "answer", *,
              synthetic_rows: int = 0, synthetic_digits: int = 2,
              seed: int = 0) -> List[Dict[str, str]]:
    """`source` is a .jsonl/.json/.parquet path or 'synthetic:arithmetic'."""
    if source.startswith(SYNTHETIC_PREFIX):
        task = source[len(SYNTHETIC_PREFIX):]
        if task not in TASKS:
            raise DatasetError(f"unknown synthetic task {task!r}; choose one of {TASKS}")
        return arithmetic_rows(synthetic_rows, synthetic_digits, seed)
    if not os.path.isfile(source):
        raise DatasetError(f"{source}: no such file")
    reader = {".jsonl": _read_jsonl, ".json": _read_json, ".parquet": _read_parquet}.get(
        os.path.splitext(source)[1])
    if reader is None:
        raise DatasetError(f"{source}: unknown format; use .jsonl, .json, .parquet or "
                           f"synthetic:<task>")
    rows = reader(source, prompt_key, answer_key)
    if not rows:
        raise DatasetError(f"{source}: no rows")
    return rows


def build_prompts(rows: List[Dict[str, str]], template: str, tokenizer,
                  max_prompt_tokens: int, source: str, skip_long: bool = False,
                  max_answer_tokens: Optional[int] = None) -> List[PromptRow]:
    """skip_long: leave out prompts over max_prompt_tokens (verl's filter_overlong_prompts)
    instead of refusing the data; at least one must remain. max_answer_tokens: the warm start
    trains on the answers, so each must encode and fit this many tokens with the eos."""
    out = []
    for i, row in enumerate(rows, start=1):
        where = row.get("where", f"{source}: row {i}")
        text = render_prompt(template, row["prompt"], tokenizer)
        try:
            ids = tokenizer.encode(text)
            answer_tokens = (None if max_answer_tokens is None
                             else len(tokenizer.encode(row["answer"])) + 1)
        except ValueError as err:
            raise DatasetError(f"{where}: {err}") from None
        if answer_tokens is not None and answer_tokens > max_answer_tokens:
            raise DatasetError(
                f"{where}: the warm start trains on its answer, {answer_tokens} tokens with the "
                f"eos, more than --rollout-max-new-tokens = {max_answer_tokens}; raise it, "
                f"drop the row, or pass --sft-iters 0")
        if not ids:
            raise DatasetError(
                f"{where}: an empty prompt (no tokens after --prompt-template); "
                f"give it text or drop it")
        if len(ids) > max_prompt_tokens:
            if skip_long:
                continue
            raise DatasetError(
                f"{where}: a {len(ids)}-token prompt, more than --seq-length minus "
                f"--rollout-max-new-tokens = {max_prompt_tokens}; raise --seq-length, drop it, "
                f"or pass --skip-long-prompts")
        out.append(PromptRow(ids, text, row["answer"]))
    if not out:
        raise DatasetError(f"{source}: every prompt is longer than --seq-length minus "
                           f"--rollout-max-new-tokens = {max_prompt_tokens} tokens")
    return out
