"""QARL_OLD_LOGPROBS=1: the trainer computes token log-probabilities the way it did before
373761e (the whole [rows, vocab] fp32 log-softmax), for an A/B at one commit."""
import os

if os.environ.get("QARL_OLD_LOGPROBS"):
    import torch
    import megatron_qarl.trainer.logprobs as L
    import megatron_qarl.trainer.trainer as T
    from megatron_qarl.rl.objectives.diagnostics import entropy_from_logits

    def response_logprobs(model, batch, temperature, length_multiple=1, with_entropy=False):
        pad = (-batch.input_ids.shape[1]) % length_multiple
        ids = torch.nn.functional.pad(batch.input_ids, (0, pad))
        length = ids.shape[1]
        positions = torch.arange(length, device=ids.device).expand_as(ids)
        with L._replay(model, batch, pad, length_multiple):
            logits = model(ids, positions, L.causal_mask(length, ids.device),
                           runtime_gather_output=True)
        vocab = logits.shape[-1]
        picked = logits.gather(1, batch.predict_pos[..., None].expand(-1, -1, vocab))
        logprobs = torch.log_softmax(picked.float() / temperature, dim=-1)
        token_lp = torch.where(batch.mask, logprobs.gather(-1, batch.targets[..., None]).squeeze(-1), 0.0)
        if not with_entropy:
            return token_lp
        return token_lp, torch.where(batch.mask, entropy_from_logits(logprobs.detach()), 0.0)

    L.response_logprobs = T.response_logprobs = response_logprobs
    print("QARL_OLD_LOGPROBS: the whole-tensor log-softmax", flush=True)
