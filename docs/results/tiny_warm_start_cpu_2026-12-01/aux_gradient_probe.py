import torch, dataclasses
from megatron.core.transformer.moe.moe_utils import MoEAuxLossAutoScaler
from megatron_qarl.compat.cpu_testing import init_parallel
from megatron_qarl.models import QWEN3_MOE_TINY, build_model
from megatron_qarl.rl.data import build_prompts, build_tokenizer, read_rows
from megatron_qarl.trainer.warm_start import sft_samples
from megatron_qarl.trainer.batches import collate
from megatron_qarl.trainer import logprobs as lp_mod
init_parallel(tp=1, ep=1, seed=1234)
tok = build_tokenizer("char", None)
rows = build_prompts(read_rows("synthetic:arithmetic", "prompt", "answer", synthetic_rows=64, synthetic_digits=2, seed=1), "plain", tok, 10, "x")
batch = collate(sft_samples(rows, tok), torch.zeros(64), tok.pad_id, "cpu")
print("real tokens", int(batch.lengths.sum()), "of", batch.input_ids.numel())
def grads(coeff, masked):
    cfg = QWEN3_MOE_TINY.transformer_config(params_dtype=torch.float32, use_cpu_initialization=True, moe_aux_loss_coeff=coeff)
    torch.manual_seed(0)
    model = build_model(cfg, "none", vocab_size=128, max_sequence_length=16, **{k:v for k,v in QWEN3_MOE_TINY.model_kwargs().items() if k not in ("vocab_size","max_sequence_length")})
    MoEAuxLossAutoScaler.set_loss_scale(torch.ones(()))
    real = model.forward
    if not masked:
        model.forward = lambda *a, padding_mask=None, **k: real(*a, **k)
    logp = lp_mod.response_logprobs(model, batch, 1.0)
    loss = -torch.where(batch.mask, logp, 0.0).sum() / batch.mask.sum()
    loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
g0 = grads(0.0, True)
for masked in (True, False):
    g = grads(0.001, masked)
    aux = {n: g[n] - g0[n] for n in g}
    r = [n for n in g if "router" in n]
    print("masked" if masked else "unmasked",
          "router aux-grad norm %.3e main %.3e" % (sum(aux[n].norm()**2 for n in r)**.5, sum(g0[n].norm()**2 for n in r)**.5),
          "all aux %.3e main %.3e" % (sum(v.norm()**2 for v in aux.values())**.5, sum(v.norm()**2 for v in g0.values())**.5))
