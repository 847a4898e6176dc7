"""The /generate request for a batch of prompts and the Samples read back from its answer.

SGLang answers a batch with n samples per prompt as one flat list, prompt-major (all samples
of prompt 0, then prompt 1, ...). `output_token_logprobs` entries are
[logprob, token_id, text]; the logprobs are of the temperature-scaled distribution (see
shared/reference/sglang.md). Routed experts come base64-encoded int32,
[prompt+response-1, layers, top_k].
"""
from __future__ import annotations

import base64
import hashlib
from typing import List, Optional, Sequence

import numpy as np
import torch

from ..base import Sample, SamplingParams
from .errors import EngineRequestError

FINISH_REASONS = ("stop", "length", "abort")


def sample_seeds(seed: int, version: int, first: int, prompts: int, n: int) -> List[int]:
    """One sampling seed per sample, prompt-major, for prompts first.. of a generate call
    with weights `version`: a hash of all four, so every sample of a step draws its own
    stream and a re-run draws the same ones."""
    def one(i, j):
        key = f"{seed}:{version}:{first + i}:{j}".encode()
        return int.from_bytes(hashlib.sha256(key).digest()[:4], "little") & 0x7FFFFFFF
    return [one(i, j) for i in range(prompts) for j in range(n)]


def generate_request(prompts: Sequence[Sequence[int]], params: SamplingParams,
                     return_routed_experts: bool, seeds: Optional[List[int]] = None) -> dict:
    """seeds (sample_seeds): one request per sample, each with its own sampling_seed. With
    --enable-deterministic-inference SGLang seeds a request without one with 42, and the n
    copies of one request share theirs: each prompt's n samples came out identical."""
    sampling = {
        "max_new_tokens": params.max_new_tokens,
        "temperature": params.temperature,
        "top_p": params.top_p,
        "top_k": params.top_k,
        "stop_token_ids": list(params.stop_token_ids),
        "n": params.n,
        "skip_special_tokens": False,
    }
    input_ids = [list(p) for p in prompts]
    if seeds is not None:
        input_ids = [p for p in input_ids for _ in range(params.n)]
        sampling = [{**sampling, "n": 1, "sampling_seed": s} for s in seeds]
    return {
        "input_ids": input_ids,
        "sampling_params": sampling,
        "return_logprob": True,
        "logprob_start_len": -1,
        "return_routed_experts": return_routed_experts,
    }


def decode_routed_experts(encoded: str, num_layers: int, top_k: int) -> torch.Tensor:
    flat = np.frombuffer(base64.b64decode(encoded), dtype=np.int32)
    if flat.size % (num_layers * top_k):
        raise EngineRequestError(
            f"routed_experts holds {flat.size} ids, not a multiple of {num_layers} layers x "
            f"top-{top_k}; the server serves another model than the learner")
    return torch.from_numpy(flat.copy()).view(-1, num_layers, top_k)


def _sample(prompt: List[int], out: dict, url: str, routing: Optional[tuple]) -> Sample:
    meta = out.get("meta_info") or {}
    token_logprobs = meta.get("output_token_logprobs")
    if token_logprobs is None:
        raise EngineRequestError(f"{url}/generate: answer without output_token_logprobs "
                                 f"(the server ignored return_logprob)")
    ids = out.get("output_ids")
    if ids is None:
        ids = [int(t[1]) for t in token_logprobs]
    if len(ids) != len(token_logprobs):
        raise EngineRequestError(f"{url}/generate: {len(ids)} output ids but "
                                 f"{len(token_logprobs)} logprobs")
    reason = (meta.get("finish_reason") or {"type": "abort"}).get("type")
    if reason not in FINISH_REASONS:
        raise EngineRequestError(f"{url}/generate: unknown finish_reason {reason!r}")
    if meta.get("prompt_tokens") is not None and int(meta["prompt_tokens"]) != len(prompt):
        raise EngineRequestError(
            f"{url}/generate: the server read {meta['prompt_tokens']} of the prompt's "
            f"{len(prompt)} tokens (started with --allow-auto-truncate?): the sample would not "
            f"be of its prompt; serve without it, or lower --seq-length")
    version = meta.get("weight_version")
    # SGLang 0.5.23: the versions of the response's spans, {version, start, end} or
    # [version, start, end]; weight_version is the last span's
    spans = meta.get("weight_versions") or []
    if len({str(v["version"] if isinstance(v, dict) else v[0]) for v in spans}) > 1:
        version = None  # sampled across an update: stale for _check_versions
    routed = None
    if routing is not None:
        if meta.get("routed_experts") is None:
            raise EngineRequestError(
                f"{url}/generate: no routed_experts in the answer; start the server with "
                f"--enable-return-routed-experts (or drop --rollout-routing-replay)")
        routed = decode_routed_experts(meta["routed_experts"], *routing)
    return Sample(prompt_ids=list(prompt), response_ids=[int(i) for i in ids],
                  sampler_logprobs=[float(t[0]) for t in token_logprobs], finish_reason=reason,
                  weight_version=int(version) if str(version).isdigit() else -1,
                  routed_experts=routed, meta={"engine": url, "id": meta.get("id")})


def parse_generate_response(answer, prompts: Sequence[Sequence[int]], n: int, url: str,
                            routing: Optional[tuple] = None) -> List[List[Sample]]:
    """routing: (num_layers, top_k) when routed experts were asked for."""
    outs = answer if isinstance(answer, list) else [answer]
    if len(outs) != len(prompts) * n:
        raise EngineRequestError(f"{url}/generate: {len(outs)} outputs for {len(prompts)} "
                                 f"prompts x n={n}")
    return [[_sample(p, outs[i * n + j], url, routing) for j in range(n)]
            for i, p in enumerate(prompts)]
