"""Collation of rollout samples and micro-batches bucketed by tokens."""
import torch

from megatron_qarl.rollout.base import Sample
from megatron_qarl.trainer.batches import collate, micro_batch_rows, select


def test_collate_aligns_response_tokens_with_their_predicting_position():
    samples = [Sample([5, 6, 7], [8, 9], [-0.5, -0.25], "stop"),
               Sample([5], [4, 3, 2], [-1.0, -2.0, -3.0], "length")]
    batch = collate(samples, torch.tensor([1.0, -1.0]), pad_id=0, device="cpu")
    assert batch.input_ids.tolist() == [[5, 6, 7, 8, 9], [5, 4, 3, 2, 0]]
    assert batch.mask.tolist() == [[True, True, False], [True, True, True]]
    for b in range(2):
        for j in range(int(batch.mask[b].sum())):
            # the logits at predict_pos[b, j] predict input_ids[b, predict_pos + 1]
            assert batch.input_ids[b, batch.predict_pos[b, j] + 1] == batch.targets[b, j]
    part = select(batch, [0])
    assert part.input_ids.tolist() == [[5, 6, 7, 8, 9]] and part.mask.shape == (1, 2)
    assert part.sampler_logprobs.tolist() == [[-0.5, -0.25]]


def test_token_budget_buckets_by_length_and_fits():
    lengths = [5, 30, 6, 28, 7, 31, 5, 8]
    chunks = micro_batch_rows(lengths, micro_batch_size=1, max_tokens=32)
    assert sorted(i for c in chunks for i in c) == list(range(len(lengths)))
    for chunk in chunks:
        assert len(chunk) * max(lengths[i] for i in chunk) <= 32
    assert len(chunks) == 5  # the 4 shortest together, then one row each
    fixed = micro_batch_rows(lengths, micro_batch_size=4, max_tokens=0)
    assert [len(c) for c in fixed] == [4, 4]
