"""Shard-alignment rules: a rank may quantize its own shard only if every quantization group
SGLang forms on the full weight lies inside one shard (and inside one HF tensor).

Quantization groups have a size along the input dim (W4A16: the -gNN of --rollout-quant; FP8: 128;
INT8: the whole row, its per-channel scale) and along the output dim (FP8: 128 rows; others:
one row). A sharded dim's per-rank size, and the sub-tensors fused along the output dim (the
[gate; up] halves of fc1, the per-head q/k/v rows of linear_qkv), must be multiples of them.
`check_layout` is called by every quantized module at construction and by `validate_model`
before any weight is allocated, so a bad --tensor-model-parallel-size fails at start-up.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from ..quant import FP8Block, Int8W8A8, NoQuant, QuantizationError, QuantScheme, W4A16
from ..quant.fp8_block import BLOCK as FP8_BLOCK
from ..quant.w4a16 import SCHEME_FLAG

TP_FLAG = "--tensor-model-parallel-size"
ETP_FLAG = "--expert-tensor-parallel-size"
EP_FLAG = "--expert-model-parallel-size"
TARGETS_FLAG = "--quant-targets"
KV_CHANNELS = "kv_channels (the head dim; the trainer's --model preset sets it)"
KEEP_OPERAND_FLAG = "--quant-keep-operand"


@dataclass(frozen=True)
class LinearLayout:
    """One quantized linear as a rank holds it."""

    name: str  # e.g. "experts.linear_fc2" (for messages)
    out_per_rank: int
    in_per_rank: int
    in_full: int
    out_segment: int  # rows of one fused sub-tensor inside out_per_rank (= out_per_rank if none)
    split_flag: str  # the flag that sets the split size (TP_FLAG or ETP_FLAG)
    split_size: int
    in_split: bool  # row-parallel (input dim sharded) vs column-parallel (output dim sharded)
    segment_setting: str = ""  # what sets out_segment (e.g. kv_channels for q/k/v heads)


def input_group(scheme: QuantScheme, in_full: int) -> int:
    if isinstance(scheme, W4A16):
        return scheme.group_size
    if isinstance(scheme, FP8Block):
        return FP8_BLOCK
    if isinstance(scheme, Int8W8A8):
        return in_full
    return 1


def output_group(scheme: QuantScheme) -> int:
    return FP8_BLOCK if isinstance(scheme, FP8Block) else 1


def require_quantizing_scheme(scheme: QuantScheme, module: str) -> None:
    """A quantized module cannot take the 'none' scheme: that is the plain model."""
    if isinstance(scheme, NoQuant):
        raise QuantizationError(
            f"{module}: scheme 'none' cannot build a quantized module; for an unquantized "
            f"learner use build_model(..., scheme 'none' or quantize=False), which keeps "
            f"Megatron's own layers (the trainer: --no-aligned-learner or --rollout-quant none)"
        )


def check_layout(scheme: QuantScheme, layout: LinearLayout) -> None:
    g_in, g_out = input_group(scheme, layout.in_full), output_group(scheme)
    what = f"{layout.name} under {scheme.name} with {layout.split_flag} {layout.split_size}"
    if layout.in_per_rank % g_in:
        if layout.in_split and layout.split_size > 1:
            raise QuantizationError(
                f"{what}: each rank holds {layout.in_per_rank} of {layout.in_full} input "
                f"columns, not a multiple of the quantization group {g_in}, so a group would "
                f"straddle two ranks. Fix: lower {layout.split_flag} so that "
                f"{layout.in_full}/size is a multiple of {g_in}"
                + (f", or a smaller W4A16 group ({SCHEME_FLAG} w4a16-g64 or w4a16-g32)"
                   if isinstance(scheme, W4A16) else "")
                + (f", or use expert parallelism ({EP_FLAG}) instead"
                   if layout.split_flag == ETP_FLAG else "")
            )
        raise QuantizationError(
            f"{what}: {layout.in_per_rank} input columns are not a multiple of the "
            f"quantization group {g_in}. Fix: a {SCHEME_FLAG} group that divides it, or leave this "
            f"module out of {TARGETS_FLAG}"
        )
    segmented = layout.out_segment != layout.out_per_rank
    sharded = not layout.in_split and layout.split_size > 1
    if (segmented or sharded) and layout.out_segment % g_out:
        raise QuantizationError(
            f"{what}: {layout.out_segment}-row blocks of the output dim "
            f"({'per rank' if sharded else 'per fused sub-tensor'}) are not multiples of the "
            f"{g_out}-row quantization block, so a block would mix rows SGLang quantizes "
            f"separately. Fix: "
            + (f"a {layout.segment_setting} that is a multiple of {g_out}, "
               if layout.segment_setting else "")
            + f"a lower {layout.split_flag}"
            + (f" or expert parallelism ({EP_FLAG})" if layout.split_flag == ETP_FLAG else "")
            + f", or leave {layout.name} out of {TARGETS_FLAG}"
        )


def column_layout(name: str, out_full: int, in_full: int, split_flag: str, split_size: int,
                  segment: Optional[int] = None, segment_setting: str = "") -> LinearLayout:
    """A column-parallel linear; `segment` is a rank's rows of one fused sub-tensor."""
    out = out_full // split_size
    return LinearLayout(name, out, in_full, in_full, segment or out, split_flag, split_size,
                        False, segment_setting)


def row_layout(name: str, out_full: int, in_full: int, split_flag: str,
               split_size: int) -> LinearLayout:
    return LinearLayout(name, out_full, in_full // split_size, in_full, out_full, split_flag,
                        split_size, True)


def model_layouts(config, targets: frozenset) -> List[LinearLayout]:
    """The per-rank layouts of every quantized linear a GPT config will build."""
    tp = config.tensor_model_parallel_size
    etp = config.expert_tensor_parallel_size or tp
    head = config.kv_channels or config.hidden_size // config.num_attention_heads
    q_rows = config.num_attention_heads * head
    kv_rows = 2 * config.num_query_groups * head
    layouts = []
    if "attention" in targets:
        # q/k/v rows are interleaved per query group in units of one head
        layouts.append(column_layout("self_attention.linear_qkv", q_rows + kv_rows,
                                     config.hidden_size, TP_FLAG, tp, segment=head,
                                     segment_setting=KV_CHANNELS))
        layouts.append(row_layout("self_attention.linear_proj", config.hidden_size, q_rows,
                                  TP_FLAG, tp))
    glu = 2 if config.gated_linear_unit else 1
    if "mlp" in targets and not config.num_moe_experts:
        ffn = config.ffn_hidden_size
        layouts.append(column_layout("mlp.linear_fc1", glu * ffn, config.hidden_size, TP_FLAG,
                                     tp, segment=ffn // tp))
        layouts.append(row_layout("mlp.linear_fc2", config.hidden_size, ffn, TP_FLAG, tp))
    if "experts" in targets and config.num_moe_experts:
        ffn = config.moe_ffn_hidden_size
        layouts.append(column_layout("mlp.experts.linear_fc1", glu * ffn, config.hidden_size,
                                     ETP_FLAG, etp, segment=ffn // etp))
        layouts.append(row_layout("mlp.experts.linear_fc2", config.hidden_size, ffn, ETP_FLAG,
                                  etp))
    return layouts


def check_expert_parallel(config) -> None:
    ep = config.expert_model_parallel_size
    if config.num_moe_experts and config.num_moe_experts % ep:
        raise ValueError(
            f"{config.num_moe_experts} experts cannot be split evenly over {EP_FLAG} {ep}; "
            f"use an {EP_FLAG} that divides {config.num_moe_experts}"
        )


def validate_model(config, scheme: QuantScheme, targets: frozenset) -> None:
    """Every start-up check, before any weight is allocated."""
    check_expert_parallel(config)
    if targets:
        require_quantizing_scheme(scheme, "quantized model")
    for layout in model_layouts(config, targets):
        check_layout(scheme, layout)
