"""The published name set is exactly what SGLang's Qwen3-MoE loader consumes (the loader's
name handling is the test double in sglang_loader_names.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from sglang_loader_names import assert_loads_exactly  # noqa: E402
from tiny_shards import DIMS, full_hf_weights, rank_shards  # noqa: E402

from megatron_qarl.rollout.publish import ParallelGroups, hf_stream  # noqa: E402


def test_published_names_cover_every_sglang_param_exactly():
    got = dict(hf_stream(rank_shards(full_hf_weights(), 1, 0, 1, 0, 1, 0),
                         ParallelGroups(None, None, None, True, True), DIMS))
    assert_loads_exactly(got, DIMS.num_layers, DIMS.num_experts)
