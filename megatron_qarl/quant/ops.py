"""The forward GEMMs and the per-step weight quantizer behind one interface: the schemes'
pure-torch reference everywhere, replaced per (scheme, device type) by a registered kernel
(Triton/TE on CUDA) that reproduces it. The same for two ops around them that a kernel does
without atomics or sorting: the MoE combine's routed sums and the KV cache's row writes
(per device type); for the rollout sampler's draw, which a kernel makes in one read; for
the chosen-token log-probabilities that the sampler and the learner must compute alike; and for
the experts' SwiGLU in training, which a kernel runs in one pass each way.

Layers call `linear`/`grouped_linear`/`quantize_weight`; nothing above this module knows which
op ran.
"""
from __future__ import annotations

from typing import Callable, Dict, NamedTuple, Optional, Sequence, Tuple, Union

import torch
import torch.nn.functional as F

from .base import QuantizedWeight

LinearOp = Callable[[torch.Tensor, QuantizedWeight], torch.Tensor]
# (x [T, in] sorted by expert, qweight [E, out, in], tokens_per_expert, probs=None) -> [T, out];
# probs [T]: each row's router prob, applied as the scheme's SGLang kernel does (base.scale_rows)
GroupedOp = Callable[..., torch.Tensor]
# (weight, scheme, name, nonfinite=None) -> QuantizedWeight; weight: a master [..., out, in] or
# a list of one [out, in] master an expert; nonfinite: see quantize_weight
QuantizeOp = Callable[..., QuantizedWeight]
# (grad_out [..., out], x [..., in], qweight) -> (grad_x [..., in], grad_w [out, in]) of the STE
LinearBackwardOp = Callable[..., Tuple[torch.Tensor, torch.Tensor]]
# (grad_out, x, qweight, tokens_per_expert) -> (grad_x, grad_w [E, out, in]) of the grouped STE
GroupedBackwardOp = Callable[..., Tuple[torch.Tensor, torch.Tensor]]
# (x, fc1 qweight [E, 2F, in], fc2 qweight [E, out, F], tokens_per_expert, probs [T],
#  routed_rows=None) -> probs * fc2(silu(gate) * up) [T, out]; routed_rows: where x is padded
# past the rows routing is expected to fill, the kernels choose their tiles for those
SwigluExpertsOp = Callable[..., torch.Tensor]
# tokens [T, hidden] -> the scheme's quantized tokens in one tensor the dispatcher can move
DispatchQuantizer = Callable[[torch.Tensor], torch.Tensor]
# (rows [R, hidden] in Megatron's permutation of routing_map [T, E], routes per token)
#  -> [T, hidden]
RoutedSumOp = Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor]
# (dst [S, ...], index [W] of distinct rows, src [W, ...]) -> dst with dst[index[i]] = src[i]
WriteRowsOp = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
# differentiable h = [gate | up] [R, 2F] bf16 -> silu(gate) * up [R, F] bf16, the forward bit
# for bit reference_gated_activation's
GatedActivationOp = Callable[[torch.Tensor], torch.Tensor]
# (scores [B, V] fp32, generator) -> [B] int64 drawn with probabilities softmax(scores)
RaceArgmaxOp = Callable[[torch.Tensor, torch.Generator], torch.Tensor]


class TokenLogprobOps(NamedTuple):
    """Kernels for log p(token) of the temperature-scaled softmax, registered per device type.
    The rollout sampler and the learner both take them where registered, so equal logits give
    equal logprobs: their own bits (scaled by fp32(1/T)), not torch's log_softmax's."""
    #: (logits [N, V], rows [M], targets [M], T, with_entropy) -> (logprobs [M], entropy [M]
    #: or empty, norm [M, 2] for the backward), fp32
    forward: Callable[..., Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
    #: (upstream [M], logits, rows, targets, T, norm) -> grad [N, V] in the logits' dtype
    backward: Callable[..., torch.Tensor]
    #: (logits [B, V], T, generator) -> (tokens [B] int64, their logprobs [B] fp32)
    sample: Callable[..., Tuple[torch.Tensor, torch.Tensor]]


_LINEAR: Dict[Tuple[str, str], LinearOp] = {}
_GROUPED: Dict[Tuple[str, str], GroupedOp] = {}
_QUANTIZE: Dict[Tuple[str, str], QuantizeOp] = {}
_LINEAR_BACKWARD: Dict[Tuple[str, str], LinearBackwardOp] = {}
_GROUPED_BACKWARD: Dict[Tuple[str, str], GroupedBackwardOp] = {}
_SWIGLU_EXPERTS: Dict[Tuple[str, str], SwigluExpertsOp] = {}
_DISPATCH_QUANTIZER: Dict[Tuple[str, str], DispatchQuantizer] = {}
_ROUTED_SUM: Dict[str, RoutedSumOp] = {}
_WRITE_ROWS: Dict[str, WriteRowsOp] = {}
_GATED_ACTIVATION: Dict[str, GatedActivationOp] = {}
_RACE_ARGMAX: Dict[str, RaceArgmaxOp] = {}
_TOKEN_LOGPROBS: Dict[str, TokenLogprobOps] = {}


def _key(scheme_type: type, device_type: str) -> Tuple[str, str]:
    return scheme_type.__name__, device_type


def register_linear(scheme_type: type, device_type: str, op: LinearOp) -> None:
    _LINEAR[_key(scheme_type, device_type)] = op


def register_grouped(scheme_type: type, device_type: str, op: GroupedOp) -> None:
    _GROUPED[_key(scheme_type, device_type)] = op


def register_quantize(scheme_type: type, device_type: str, op: QuantizeOp) -> None:
    _QUANTIZE[_key(scheme_type, device_type)] = op


def register_linear_backward(scheme_type: type, device_type: str, op: LinearBackwardOp) -> None:
    _LINEAR_BACKWARD[_key(scheme_type, device_type)] = op


def register_grouped_backward(scheme_type: type, device_type: str, op: GroupedBackwardOp) -> None:
    _GROUPED_BACKWARD[_key(scheme_type, device_type)] = op


def register_swiglu_experts(scheme_type: type, device_type: str, op: SwigluExpertsOp) -> None:
    _SWIGLU_EXPERTS[_key(scheme_type, device_type)] = op


def register_dispatch_quantizer(scheme_type: type, device_type: str,
                                op: Optional[DispatchQuantizer]) -> None:
    """op quantizes tokens before the MoE dispatcher moves them; the scheme's swiglu_experts
    op on this device must then accept its output. None withdraws it."""
    if op is None:
        _DISPATCH_QUANTIZER.pop(_key(scheme_type, device_type), None)
    else:
        _DISPATCH_QUANTIZER[_key(scheme_type, device_type)] = op


def dispatch_quantizer(scheme, device: torch.device) -> Optional[DispatchQuantizer]:
    """The registered pre-dispatch quantizer of this scheme and device, or None."""
    return _DISPATCH_QUANTIZER.get(_key(type(scheme), device.type))


def linear_backward_op(qweight: QuantizedWeight, device: torch.device):
    """The registered dense STE backward for this weight and device, or None (reference)."""
    return _LINEAR_BACKWARD.get(_key(type(qweight.scheme), device.type))


def grouped_backward_op(qweight: QuantizedWeight, device: torch.device):
    """The registered grouped STE backward for this weight and device, or None (reference)."""
    return _GROUPED_BACKWARD.get(_key(type(qweight.scheme), device.type))


def quantize_weight(scheme, weight: Union[torch.Tensor, Sequence[torch.Tensor]],
                    name: str = "weight",
                    nonfinite: Optional[torch.Tensor] = None) -> QuantizedWeight:
    """scheme.quantize_weight, by a fused kernel where one is registered (bit-identical).
    weight: the master, or one 2-D master an expert: the kernels read those in place, the
    reference quantizes their stack. nonfinite: an int32 [1] on the weight's device to add a
    nonzero count to if the weight has NaN/inf, instead of raising (one host sync then checks
    many weights)."""
    device = weight.device if isinstance(weight, torch.Tensor) else weight[0].device
    op = _QUANTIZE.get(_key(type(scheme), device.type))
    if op:
        return op(weight, scheme, name) if nonfinite is None else \
            op(weight, scheme, name, nonfinite=nonfinite)
    if not isinstance(weight, torch.Tensor):
        weight = torch.stack(list(weight))
    if nonfinite is None:
        return scheme.quantize_weight(weight, name)
    nonfinite += (~torch.isfinite(weight)).sum(dtype=torch.int32)
    return scheme.quantize_weight(weight, name, check_finite=False)


def _check_weight(qweight: QuantizedWeight, grouped: bool) -> None:
    """The layout every op reads: the kernels take the codes' rows as contiguous and one
    weight ([out, in]) or the stacked experts ([E, out, in]); a transposed or stacked weight
    in the wrong op gave wrong numbers without an error."""
    dims = 3 if grouped else 2
    if len(qweight.shape) != dims:
        raise ValueError(f"qweight: shape {tuple(qweight.shape)}; "
                         + ("the grouped op takes the experts stacked [E, out, in]" if grouped
                            else "the dense op takes one [out, in] weight: index the expert"))
    if qweight.data.stride(-1) != 1:
        raise ValueError(f"qweight.data: strides {qweight.data.stride()}, rows not contiguous; "
                         f"pass the codes in the serving layout (qweight.data.contiguous())")


def _check_grouped(x: torch.Tensor, qweight: QuantizedWeight) -> None:
    _check_weight(qweight, grouped=True)
    if x.dim() != 2:
        raise ValueError(f"x: shape {tuple(x.shape)}; the grouped op takes the rows sorted by "
                         f"expert as [tokens, in]: flatten the activations first")


def linear(x: torch.Tensor, qweight: QuantizedWeight) -> torch.Tensor:
    _check_weight(qweight, grouped=False)
    op = _LINEAR.get(_key(type(qweight.scheme), x.device.type))
    return op(x, qweight) if op else qweight.scheme.reference_matmul(x, qweight)


def grouped_reads_counts_on_host(scheme, device_type: str) -> bool:
    """Whether the grouped op registered for `scheme` reads tokens_per_expert on the host
    (TransformerEngine's grouped GEMM takes its splits as a list): a forward running it
    cannot be captured in a CUDA graph. An op's `reads_counts_on_host` is a bool, or a
    function of no arguments where it depends on the GPU."""
    flag = getattr(_GROUPED.get(_key(type(scheme), device_type)), "reads_counts_on_host", False)
    return bool(flag() if callable(flag) else flag)


def grouped_linear(x: torch.Tensor, qweight: QuantizedWeight, tokens_per_expert: torch.Tensor,
                   probs: Optional[torch.Tensor] = None) -> torch.Tensor:
    """probs [T]: the router prob of each row (fc2 of the experts), applied as the SGLang
    kernel serving the scheme applies it (base.scale_rows)."""
    _check_grouped(x, qweight)
    op = _GROUPED.get(_key(type(qweight.scheme), x.device.type))
    if op:
        return op(x, qweight, tokens_per_expert, probs=probs)
    return qweight.scheme.reference_grouped_matmul(x, qweight, tokens_per_expert, probs)


def reference_gated_activation(h: torch.Tensor, activation=F.silu) -> torch.Tensor:
    """activation(gate) * up for h = [gate | up], in fp32, rounded once: SGLang's silu_and_mul
    (the router prob comes after fc2, grouped_linear's probs). Every fused SwiGLU kernel
    reproduces it bit for bit."""
    gate, up = torch.chunk(h, 2, dim=-1)
    return (activation(gate.float()) * up.float()).to(h.dtype)


def register_gated_activation(device_type: str, op: GatedActivationOp) -> None:
    _GATED_ACTIVATION[device_type] = op


def gated_activation(h: torch.Tensor, activation=F.silu) -> torch.Tensor:
    """reference_gated_activation; for SwiGLU on bf16 by the op registered for h's device,
    which gives the same forward bits."""
    op = _GATED_ACTIVATION.get(h.device.type)
    if op is not None and activation is F.silu and h.dtype == torch.bfloat16:
        return op(h)
    return reference_gated_activation(h, activation)


def composed_swiglu_experts(x: torch.Tensor, fc1: QuantizedWeight, fc2: QuantizedWeight,
                            tokens_per_expert: torch.Tensor, probs: torch.Tensor,
                            routed_rows: int = None) -> torch.Tensor:
    """The experts' MLP from the grouped op and gated_activation: what every fused version
    reproduces. The grouped ops take no tile hint, so routed_rows changes nothing here."""
    h = gated_activation(grouped_linear(x, fc1, tokens_per_expert))
    return grouped_linear(h, fc2, tokens_per_expert, probs)


def swiglu_experts(x: torch.Tensor, fc1: QuantizedWeight, fc2: QuantizedWeight,
                   tokens_per_expert: torch.Tensor, probs: torch.Tensor,
                   routed_rows: int = None) -> torch.Tensor:
    """SwiGLU experts, the router probs applied to fc2's output (fc1 = [gate; up]),
    for forwards without autograd (rollout, old logprobs), fused where a kernel is registered:
    the learner's forward keeps fc1's output for its backward and calls the grouped op per
    projection. routed_rows: see SwigluExpertsOp."""
    _check_grouped(x, fc1)
    _check_weight(fc2, grouped=True)
    op = _SWIGLU_EXPERTS.get(_key(type(fc1.scheme), x.device.type), composed_swiglu_experts)
    return op(x, fc1, fc2, tokens_per_expert, probs, routed_rows=routed_rows)


def register_routed_sum(device_type: str, op: RoutedSumOp) -> None:
    _ROUTED_SUM[device_type] = op


def routes_through(routing_map: torch.Tensor) -> torch.Tensor:
    """[T, E] int32: how many routed entries Megatron's permutation puts up to and including
    entry (t, e) (expert by expert, ascending token within one). Where routing_map is set, one
    less is the entry's row in the permuted tokens."""
    experts_major = routing_map.T.contiguous().view(-1)
    return experts_major.cumsum(0, dtype=torch.int32).view(routing_map.shape[1], -1).T


def reference_routed_sum(rows: torch.Tensor, routing_map: torch.Tensor,
                         routes: int) -> torch.Tensor:
    """Each token's rows summed in ascending expert order, in fp32, rounded once: the MoE
    combine that a kernel reproduces bit for bit. Every token has at most `routes` entries."""
    tokens, hidden = routing_map.shape[0], rows.shape[-1]
    out = torch.zeros(tokens, hidden, dtype=torch.float32, device=rows.device)
    if rows.shape[0] == 0:
        return out.to(rows.dtype)
    row_of = routes_through(routing_map) - 1
    taken = routing_map.to(torch.int32)
    rank = taken.cumsum(1) - taken  # a token's routes, numbered in ascending expert order
    for r in range(routes):
        chosen = routing_map & (rank == r)
        row = torch.where(chosen, row_of, 0).sum(1)
        out += torch.where(chosen.any(1, keepdim=True), rows.index_select(0, row).float(), 0.0)
    return out.to(rows.dtype)


def routed_sum(rows: torch.Tensor, routing_map: torch.Tensor, routes: int) -> torch.Tensor:
    """reference_routed_sum, by a kernel where one is registered for the rows' device."""
    op = _ROUTED_SUM.get(rows.device.type, reference_routed_sum)
    return op(rows, routing_map, routes)


def register_write_rows(device_type: str, op: WriteRowsOp) -> None:
    _WRITE_ROWS[device_type] = op


def write_rows(dst: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """dst.index_copy_(0, index, src) for distinct rows, by a kernel where one is registered:
    the rows being distinct, it needs none of the sorting that torch's deterministic
    algorithms give index_copy_ (the embedded engine's KV-cache writes)."""
    op = _WRITE_ROWS.get(dst.device.type)
    return op(dst, index, src) if op else dst.index_copy_(0, index, src)


def register_race_argmax(device_type: str, op: RaceArgmaxOp) -> None:
    _RACE_ARGMAX[device_type] = op


#: the smallest race time drawn: log(0) would make a token win whatever its probability
_TINY = torch.finfo(torch.float32).tiny


def reference_race_argmax(scores: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """argmax_v(scores_v - log E_v) with E_v ~ Exp(1) i.i.d. from `generator`: token v with
    probability softmax(scores)_v (the Gumbel-max trick), with no normalization pass; -inf
    scores never win. A kernel draws other times from the same generator: same distribution,
    other tokens."""
    race = torch.empty_like(scores).exponential_(generator=generator).clamp_(min=_TINY)
    return (scores - race.log_()).argmax(dim=-1)


def race_argmax(scores: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """reference_race_argmax's draw, by a kernel where one is registered for the device."""
    return _RACE_ARGMAX.get(scores.device.type, reference_race_argmax)(scores, generator)


def register_token_logprobs(device_type: str, op: TokenLogprobOps) -> None:
    _TOKEN_LOGPROBS[device_type] = op


def token_logprob_ops(device: torch.device) -> Optional[TokenLogprobOps]:
    """The registered token-logprob kernels of this device, or None (torch's log_softmax)."""
    return _TOKEN_LOGPROBS.get(device.type)


def registered_ops() -> dict:
    """Which kernels replace the reference, for logs and benchmarks."""
    return {"linear": sorted(_LINEAR), "grouped": sorted(_GROUPED),
            "quantize": sorted(_QUANTIZE), "linear_backward": sorted(_LINEAR_BACKWARD),
            "grouped_backward": sorted(_GROUPED_BACKWARD),
            "swiglu_experts": sorted(_SWIGLU_EXPERTS),
            "dispatch_quantizer": sorted(_DISPATCH_QUANTIZER), "routed_sum": sorted(_ROUTED_SUM),
            "write_rows": sorted(_WRITE_ROWS), "race_argmax": sorted(_RACE_ARGMAX),
            "token_logprobs": sorted(_TOKEN_LOGPROBS),
            "gated_activation": sorted(_GATED_ACTIVATION)}
