"""TEST DOUBLE of the name handling in SGLang 0.5.23 `models/qwen3_moe.py::load_weights`
(stacked q/k/v -> qkv_proj, expert `experts.{e}.{gate,up,down}_proj.` -> `experts.w13_` /
`experts.w2_` with shard w1/w3/w2), applied to the parameters a compressed-tensors W4A16 MoE
model registers. Its loader skips names it cannot map silently, so `assert_loads_exactly`
checks both directions: nothing extra, nothing missing."""
import re
from collections import Counter
from typing import Iterable

STACKED = [("qkv_proj", "q_proj", "q"), ("qkv_proj", "k_proj", "k"),
           ("qkv_proj", "v_proj", "v")]
EXPERT = re.compile(r"experts\.(\d+)\.(gate_proj|up_proj|down_proj)\.")
SHARD = {"gate_proj": ("w13_", "w1"), "up_proj": ("w13_", "w3"), "down_proj": ("w2_", "w2")}
CT_SUFFIXES = ("weight_packed", "weight_scale", "weight_shape")


def sglang_params(num_layers):
    names = {"model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"}
    for i in range(num_layers):
        p = f"model.layers.{i}."
        names |= {p + s for s in ("input_layernorm.weight", "post_attention_layernorm.weight",
                                  "self_attn.qkv_proj.weight", "self_attn.o_proj.weight",
                                  "self_attn.q_norm.weight", "self_attn.k_norm.weight",
                                  "mlp.gate.weight")}
        names |= {f"{p}mlp.experts.{w}{s}" for w in ("w13_", "w2_") for s in CT_SUFFIXES}
    return names


def sglang_loader_targets(name):
    """(param name, shard id, expert id) the loader would write to; it skips the name when
    that param is not in `sglang_params`."""
    m = EXPERT.search(name)
    if m:
        prefix, shard = SHARD[m.group(2)]
        return name.replace(m.group(0), "experts." + prefix), shard, int(m.group(1))
    for param, weight, shard in STACKED:
        if weight in name:
            return name.replace(weight, param), shard, None
    return name, None, None


def assert_loads_exactly(names: Iterable[str], num_layers: int, num_experts: int) -> None:
    """Every published name lands on a distinct (param, shard, expert) of the W4A16 model and
    every one of those is written."""
    params = sglang_params(num_layers)
    targets = Counter()
    for name in names:
        param, shard, expert = sglang_loader_targets(name)
        assert param in params, f"{name} would be skipped by SGLang's loader"
        targets[(param, shard, expert)] += 1
    assert max(targets.values()) == 1
    for i in range(num_layers):
        for w, shards in (("w13_", ("w1", "w3")), ("w2_", ("w2",))):
            for suffix in CT_SUFFIXES:
                param = f"model.layers.{i}.mlp.experts.{w}{suffix}"
                for e in range(num_experts):
                    for shard in shards:
                        assert targets[(param, shard, e)] == 1, (param, shard, e)
        for shard in "qkv":
            assert targets[(f"model.layers.{i}.self_attn.qkv_proj.weight", shard, None)] == 1
    assert {p for p, _, _ in targets} == params
