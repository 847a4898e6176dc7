"""On PYTHONPATH: the token-logprob kernels are never registered (torch's sampler/learner path)."""
from megatron_qarl.quant import ops
ops.register_token_logprobs = lambda *args: None
