"""The warm start's steps (trainer.warm_start): each data-parallel rank trains on its share of
the step's prompts, on their gold answers followed by eos, with the cross-entropy averaged over
the answer tokens. The end-to-end runs check only that the SFT loss falls: a rank training
on every rank's prompts, answers without eos (a model that never learns to stop) or a loss
averaged over responses rather than tokens passed them (a review's mutations)."""
from types import SimpleNamespace

import pytest
import torch

from megatron_qarl.rl.data import PromptOrder
from megatron_qarl.trainer import warm_start as warm_start_module
from megatron_qarl.trainer.batches import select

EOS = 1


def _tokenizer():
    """An answer's tokens: its digits, each + 10."""
    return SimpleNamespace(encode=lambda text: [10 + int(c) for c in text], eos_id=EOS,
                           pad_id=0)


def test_each_rank_trains_on_its_share_of_the_answers_and_eos_per_token(monkeypatch):
    rows = [SimpleNamespace(prompt_ids=[100 + i, 99], answer=str(7 * i)) for i in range(6)]
    args = SimpleNamespace(seed=3, sft_iters=2, sft_batch_size=4, micro_batch_size=2,
                           max_tokens_per_micro_batch=0)
    monkeypatch.setattr(warm_start_module, "dp_rank_and_size", lambda: (1, 2))
    # every answer token at log p -0.5: the per-token loss is 0.5 whatever the lengths
    monkeypatch.setattr(warm_start_module, "response_logprobs",
                        lambda model, micro, temperature, multiple: torch.where(
                            micro.mask, -0.5, 0.0))
    steps = []

    def optimizer_step(model, optimizer, batch, rows, *, scheduler, loss_fn, normalizer,
                       loss_name, **_):
        assert scheduler == "the warm start's scheduler"
        sub = select(batch, rows)
        total = normalizer(sub.mask)
        loss, _ = loss_fn(sub, total)
        steps.append((batch, rows, float(total), float(loss)))
        return {loss_name: float(loss)}, {}

    monkeypatch.setattr(warm_start_module, "optimizer_step", optimizer_step)
    logged = []
    warm_start_module.warm_start(None, None, "the warm start's scheduler", rows, _tokenizer(),
                                 args, "cpu",
                                 on_step=lambda it, metrics: logged.append((it, metrics)))

    order = PromptOrder(len(rows), args.seed + 1)
    assert [it for it, _ in logged] == [1, 2]
    for (batch, picked, total, loss), (_, metrics) in zip(steps, logged):
        mine = order.next_indices(args.sft_batch_size)[1::2]  # rank 1 of 2
        assert batch.input_ids[:, 0].tolist() == [100 + i for i in mine]
        assert picked == list(range(len(mine)))
        for b, i in enumerate(mine):
            answer = [10 + int(c) for c in rows[i].answer] + [EOS]
            assert batch.targets[b, batch.mask[b]].tolist() == answer
        assert total == batch.mask.sum().item()  # answer tokens, not responses
        assert loss == pytest.approx(0.5) and metrics["sft_loss"] == pytest.approx(0.5)
