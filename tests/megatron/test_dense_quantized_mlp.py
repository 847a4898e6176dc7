"""A dense model (no experts) quantizes its MLP with target 'mlp': fc1 [gate; up] column-split
with stride 2, fc2 row-split. The aligned forward is the plain model's on the dequantized
weights, and TP=2 gives TP=1's loss and gradients with and without sequence parallelism
(without it, the input gradients of the column-parallel linears are all-reduced)."""
import pytest
import torch

from megatron_qarl.compat.cpu_testing import run_distributed
from megatron_qarl.layers import (
    QuantColumnParallelLinear, QuantRowParallelLinear, iter_quantized_weights,
)

from parallel_cases import compare_layouts
from tiny_qwen3 import batch, build_tiny

#: the tiny preset without experts: every layer's MLP is dense (ffn 256 = 2 x 128)
DENSE = {"num_moe_experts": None, "moe_ffn_hidden_size": None, "ffn_hidden_size": 256}
QUANTIZED = (QuantColumnParallelLinear, QuantRowParallelLinear)


def test_mlp_target_quantizes_the_dense_mlp_only(single_process):
    aligned = build_tiny("w4a16-g32", targets="mlp", **DENSE)
    for layer in aligned.decoder.layers:
        assert isinstance(layer.mlp.linear_fc1, QuantColumnParallelLinear)
        assert isinstance(layer.mlp.linear_fc2, QuantRowParallelLinear)
        assert not any(isinstance(m, QUANTIZED) for m in layer.self_attention.modules())
    plain = build_tiny("none", targets="mlp", **DENSE)
    assert not any(isinstance(m, QUANTIZED) for m in plain.modules())
    state = aligned.state_dict()
    names = set()
    for t in iter_quantized_weights(aligned):
        # the dequantized weight as the engine's GEMM sees it (test_aligned_equals_dequantized)
        state[t.name] = t.qweight.dequantize().to(t.qweight.scheme.weight_operand_dtype).float()
        names.add(t.name)
    assert names == {f"decoder.layers.{i}.mlp.linear_fc{j}.weight"
                     for i in range(aligned.config.num_layers) for j in (1, 2)}
    plain.load_state_dict(state)
    tokens, positions = batch()
    with torch.no_grad():
        want = plain(tokens, positions, None)
        got = aligned(tokens, positions, None)
    assert (got - want).abs().max() <= 1e-5


@pytest.mark.parametrize("sequence_parallel", [True, False])
def test_dense_tp2_matches_single_rank(sequence_parallel):
    # the preset turns sequence parallelism on where TP > 1 (Megatron requires it with experts)
    overrides = DENSE if sequence_parallel else {**DENSE, "sequence_parallel": False}
    per_rank = run_distributed(compare_layouts, 2, "w4a16-g32", ["tp2"], False,
                               "mlp+attention", overrides)
    for rank, results in enumerate(per_rank):
        loss_rel, grad_rel = results["tp2"]
        assert loss_rel < 1e-5, (rank, loss_rel)
        assert grad_rel < 1e-4, (rank, grad_rel)
