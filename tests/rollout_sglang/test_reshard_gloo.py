"""Resharding: full tensors gathered from 2-process gloo runs (TP=2 with EP=2, and TP=2 with
expert-TP=2) over Megatron-Core's own parallel_state groups equal the TP=1 tensors, and only
the sending rank ends up with any."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import tiny_shards  # noqa: E402

from megatron_qarl.compat.cpu_testing import init_parallel, run_distributed  # noqa: E402
from megatron_qarl.rollout.publish import ParallelGroups, hf_stream  # noqa: E402

LAYOUTS = (dict(tp=2, ep=2, etp=1), dict(tp=2, ep=1, etp=2))


def _publish_on_rank(rank, world_size):
    from megatron.core import parallel_state as ps

    hf = tiny_shards.full_hf_weights()
    results = []
    for layout in LAYOUTS:
        init_parallel(**layout)
        shards = tiny_shards.rank_shards(
            hf, layout["tp"], ps.get_tensor_model_parallel_rank(), layout["ep"],
            ps.get_expert_model_parallel_rank(), layout["etp"],
            ps.get_expert_tensor_parallel_rank())
        groups = ParallelGroups.from_megatron()
        results.append((groups.is_sender(), dict(hf_stream(shards, groups, tiny_shards.DIMS))))
    return results


def test_gathered_tensors_equal_tp1_tensors():
    hf = tiny_shards.full_hf_weights()
    tp1 = dict(hf_stream(tiny_shards.rank_shards(hf, 1, 0, 1, 0, 1, 0),
                         ParallelGroups(None, None, None, True, True), tiny_shards.DIMS))
    # TP=1 against the serving tensors made from the HF weights directly: the gathered ones
    # are compared with TP=1's below, so a fault of the TP=1 path would cancel there
    expected = tiny_shards.expected_serving(hf)
    assert tp1.keys() == expected.keys()
    for name, t in expected.items():
        assert tp1[name].dtype == t.dtype and torch.equal(tp1[name], t), name
    by_rank = run_distributed(_publish_on_rank, 2)
    for i, layout in enumerate(LAYOUTS):
        (sender0, got0), (sender1, got1) = by_rank[0][i], by_rank[1][i]
        assert (sender0, sender1) == (True, False), layout
        assert got1 == {}, f"{layout}: a non-sending rank produced tensors"
        assert got0.keys() == tp1.keys(), layout
        for name, t in tp1.items():
            assert got0[name].dtype == t.dtype and torch.equal(got0[name], t), (layout, name)
