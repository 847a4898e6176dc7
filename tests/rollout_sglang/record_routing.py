"""`python -m megatron_qarl.train` with every learner router call recorded (test harness):
per forward through the trainer's response_logprobs, the micro-batch's input_ids and
lengths, and per MoE layer the experts the router used and its own top-k. Saved with
torch.save to $ROUTING_RECORD."""
import os
import sys

import torch
from megatron.core.transformer.moe.router import TopKRouter

import megatron_qarl.trainer.trainer as trainer_module
from megatron_qarl.train import main

forwards = []
_logprobs, _routing = trainer_module.response_logprobs, TopKRouter.routing


def response_logprobs(model, batch, *args, **kwargs):
    forwards.append({"input_ids": batch.input_ids.cpu(), "lengths": batch.lengths.cpu(),
                     "layers": {}})
    return _logprobs(model, batch, *args, **kwargs)


def routing(self, logits, *args, **kwargs):
    probs, routing_map = _routing(self, logits, *args, **kwargs)
    own = torch.topk(logits.reshape(-1, logits.shape[-1]), self.topk, dim=1).indices
    forwards[-1]["layers"][self.layer_number] = (routing_map.detach().cpu(), own.cpu())
    return probs, routing_map


if __name__ == "__main__":
    trainer_module.response_logprobs = response_logprobs
    TopKRouter.routing = routing
    try:
        main(sys.argv[1:])
    finally:
        torch.save(forwards, os.environ["ROUTING_RECORD"])
