"""Worker of the 2-process TP/EP equivalence test (spawned processes import it by name)."""
import re

import torch
import torch.distributed as dist
from megatron.core import parallel_state as ps

from megatron_qarl.compat.cpu_testing import init_parallel

from tiny_qwen3 import batch, build_tiny, loss_of

LAYOUTS = {  # name: (tp, ep, etp)
    "tp2": (2, 1, 2),
    "ep2": (1, 2, 1),
    "tp2-ep2-etp1": (2, 2, 1),
}
EXPERT = re.compile(r"local_experts\.(\d+)\.")
QK_NORM = re.compile(r"\.[qk]_layernorm\.")


def _shard(full: torch.Tensor, param, group) -> torch.Tensor:
    """This rank's piece of a full tensor, as Megatron splits `param` (stride 2: [gate_r; up_r])."""
    if group.size() == 1 or not getattr(param, "tensor_model_parallel", False):
        return full
    dim, stride = param.partition_dim, getattr(param, "partition_stride", 1)
    chunks = [c.chunk(group.size(), dim)[group.rank()] for c in full.chunk(stride, dim)]
    return torch.cat(chunks, dim)


def _full_name(name: str, num_local: int) -> str:
    def to_global(m):
        return f"local_experts.{ps.get_expert_model_parallel_rank() * num_local + int(m[1])}."
    return EXPERT.sub(to_global, name)


def _split_group(name: str):
    """The group that splits a parameter: expert-TP for experts, TP for the rest."""
    return ps.get_expert_tensor_parallel_group() if EXPERT.search(name) \
        else ps.get_tensor_model_parallel_group()


@torch.no_grad()
def load_full_state(model, full_state) -> None:
    """Give a model built under the current layout this rank's shards of TP=1 EP=1 tensors."""
    ep = ps.get_expert_model_parallel_world_size()
    num_local = (model.config.num_moe_experts or ep) // ep  # any count for a dense model
    for n, p in model.named_parameters():
        p.copy_(_shard(full_state[_full_name(n, num_local)], p, _split_group(n)))


def compare_layouts(rank, world_size, scheme, layouts, grouped_experts=False,
                    targets="experts+attention", overrides=None):
    """Max |loss diff| and max |grad diff| of each layout against TP=1 EP=1, same weights.
    grouped_experts: scheme 'none' with bf16 grouped experts (--moe-grouped-gemm).
    overrides: config fields of every model built (e.g. a dense model's)."""
    overrides = {"moe_aux_loss_coeff": 0.0, **(overrides or {})}
    tokens, positions = batch(seed=3, batch_size=2)
    init_parallel(1, 1, 1, seed=7)
    ref = build_tiny(scheme, targets, grouped_experts=grouped_experts, **overrides)
    ref_loss = loss_of(ref, tokens, positions)
    ref_loss.backward()
    ref_state = {n: p.detach().clone() for n, p in ref.named_parameters()}
    ref_grads = {n: p.grad.clone() for n, p in ref.named_parameters()}
    results = {}
    for name in layouts:
        tp, ep, etp = LAYOUTS[name]
        init_parallel(tp, ep, etp, seed=11)
        model = build_tiny(scheme, targets, grouped_experts=grouped_experts, **overrides)
        num_local = (model.config.num_moe_experts or ep) // ep
        load_full_state(model, ref_state)
        dp = ps.get_data_parallel_world_size()
        rows = slice(None) if dp == 1 else slice(ps.get_data_parallel_rank(),
                                                 ps.get_data_parallel_rank() + 1)
        loss = loss_of(model, tokens[rows], positions[rows])
        loss.backward()
        total = loss.detach().clone()
        dist.all_reduce(total, group=ps.get_data_parallel_group())
        grad_diff = 0.0
        for n, p in model.named_parameters():
            grad = p.grad.clone()
            # finalize_model_grads' TP reduction: sequence-parallel params, and the q/k norms
            # (each rank normalises its own heads) with or without sequence parallelism
            if getattr(p, "sequence_parallel", False) or QK_NORM.search(n):
                dist.all_reduce(grad, group=ps.get_tensor_model_parallel_group())
            if not EXPERT.search(n) and dp > 1:  # DDP's data-parallel reduction (sum)
                dist.all_reduce(grad, group=ps.get_data_parallel_group())
            want = _shard(ref_grads[_full_name(n, num_local)], p, _split_group(n))
            grad_diff = max(grad_diff, ((grad - want).abs().max() / want.abs().max()).item())
        results[name] = (abs(total.item() - ref_loss.item()) / ref_loss.item(), grad_diff)
    return results


def ddp_expert_grads(rank, world_size, scheme):
    """TP=2, EP=1, expert-TP 1 under Megatron's DDP and finalize_model_grads, as the trainer
    reduces: max relative |grad diff| of the routed experts' reduced gradients against TP=1.
    Each TP rank holds whole experts and runs them on its own sequence-parallel tokens."""
    from megatron.core.distributed import finalize_model_grads

    from megatron_qarl.trainer.optimizer import wrap_ddp

    tokens, positions = batch(seed=3, batch_size=2)
    init_parallel(1, 1, 1, seed=7)
    ref = build_tiny(scheme, moe_aux_loss_coeff=0.0)
    loss_of(ref, tokens, positions).backward()
    ref_state = {n: p.detach().clone() for n, p in ref.named_parameters()}
    ref_grads = {n: p.grad.clone() for n, p in ref.named_parameters()}
    init_parallel(2, 1, 1, seed=11)
    model = build_tiny(scheme, moe_aux_loss_coeff=0.0)
    load_full_state(model, ref_state)
    ddp = wrap_ddp(model, model.config, use_distributed_optimizer=False)
    loss_of(ddp, tokens, positions).backward()
    finalize_model_grads([ddp])
    diffs = [((p.main_grad - ref_grads[n]).abs().max() / ref_grads[n].abs().max()).item()
             for n, p in model.named_parameters() if EXPERT.search(n)]
    return len(diffs), max(diffs)


def quantized_shards(rank, world_size, scheme, layouts):
    """Per layout: how many quantized tensors iter_quantized_weights gives this rank, and the
    names of those whose metadata does not locate them in the TP=1 model: the piece of the TP=1
    dequantized weight that the global expert index, partition dim and stride, and rank in
    the splitting group name must be the tensor's dequantized weight, and the group and EP
    rank and size must be Megatron's."""
    from megatron_qarl.layers import iter_quantized_weights

    init_parallel(1, 1, 1, seed=7)
    ref = build_tiny(scheme)
    full_state = {n: p.detach().clone() for n, p in ref.named_parameters()}
    full = {t.name: t.qweight.dequantize() for t in iter_quantized_weights(ref)}
    results = {}
    for name in layouts:
        init_parallel(*LAYOUTS[name], seed=11)
        model = build_tiny(scheme)
        load_full_state(model, full_state)
        ep = (ps.get_expert_model_parallel_rank(), ps.get_expert_model_parallel_world_size())
        tensors, wrong = list(iter_quantized_weights(model)), []
        for t in tensors:
            want = full[t.name if t.expert is None
                        else EXPERT.sub(f"local_experts.{t.expert}.", t.name)]
            if t.partition_dim is not None:
                want = torch.cat([c.chunk(t.tp_size, t.partition_dim)[t.tp_rank]
                                  for c in want.chunk(t.partition_stride, t.partition_dim)],
                                 t.partition_dim)
            group = _split_group(t.name)
            if not (torch.equal(t.qweight.dequantize(), want)
                    and (t.tp_rank, t.tp_size) == (group.rank(), group.size())
                    and (t.ep_rank, t.ep_size) == ep):
                wrong.append(t.name)
        results[name] = (len(tensors), wrong)
    return results
