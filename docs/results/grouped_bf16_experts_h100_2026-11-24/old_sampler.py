"""Session 29 A/B: tools/profile_embedded_decode.py with the sampler before 2e0f... (softmax +
torch.multinomial) patched in, on the same machine as the new one."""
import runpy
import sys

import torch

import megatron_qarl.rollout.embedded.generate as generate
from megatron_qarl.rollout.embedded.sampling import _truncate


def old_sample_next(logits, params, generator):
    logprobs = torch.log_softmax(logits.float() / params.temperature, dim=-1)
    probs = torch.softmax(_truncate(logprobs, params.top_k, params.top_p), dim=-1)
    tokens = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
    return tokens, logprobs.gather(-1, tokens[:, None]).squeeze(-1)


generate.sample_next = old_sample_next
sys.argv = ["tools/profile_embedded_decode.py"] + sys.argv[1:]
runpy.run_path("tools/profile_embedded_decode.py", run_name="__main__")
