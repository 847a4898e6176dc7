"""The aligned forward equals a plain Megatron model (SequentialMLP experts, plain linears)
whose target weights are replaced by the dequantized weights as the engine's GEMM sees them."""
import pytest
import torch

from megatron_qarl.layers import iter_quantized_weights

from tiny_qwen3 import batch, build_tiny

# The aligned experts multiply the router prob into fc2's output (SGLang's order), the plain
# model into fc2's input (Megatron's): the same fp32 logits up to those products' roundings
# (W4A16 on CPU: 3.0e-7). FP8/INT8 also quantize activations, which the plain model does not:
# the logits then differ by the activation rounding (on CPU: max |diff| 0.038 FP8, 0.010 INT8).
TOLERANCE = {"w4a16-g32": 1e-5, "w4a16": 1e-5, "fp8-block": 0.1, "int8": 0.1}


@pytest.mark.parametrize("scheme", list(TOLERANCE))
def test_logits_match_plain_model_with_dequantized_weights(single_process, scheme):
    aligned = build_tiny(scheme)
    plain = build_tiny("none")
    state = aligned.state_dict()
    for t in iter_quantized_weights(aligned):
        state[t.name] = t.qweight.dequantize().to(t.qweight.scheme.weight_operand_dtype).float()
    plain.load_state_dict(state)
    tokens, positions = batch()
    with torch.no_grad():
        want = plain(tokens, positions, None)
        got = aligned(tokens, positions, None)
    diff = (got - want).abs().max().item()
    assert diff <= TOLERANCE[scheme], diff
    if TOLERANCE[scheme] > 1e-3:
        assert diff > 1e-3  # activations really are quantized
