"""The weight quantizers read one 2-D master per expert where it lies (no stacked copy a step):
every scheme's kernel gives the bits of the same kernel on the stacked masters, wherever and
in whatever order the masters lie, aligned or not."""
import re

import pytest
import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from megatron_qarl.quant import NoQuant, QuantizationError, get_scheme, ops
from qarl_kernels.bf16_quantize import bf16_quantize
from qarl_kernels.expert_masters import master_table
from qarl_kernels.fp8_quantize import fp8_block_quantize
from qarl_kernels.int8_quantize import int8_quantize
from qarl_kernels import bf16_quantize as bf16_module
from qarl_kernels import fp8_quantize as fp8_module
from qarl_kernels import int8_quantize as int8_module
from qarl_kernels import w4a16_quantize as w4a16_module
from qarl_kernels.w4a16_quantize import w4a16_quantize
from sm90_ptx import facts_of_child, serve_facts

QUANTIZERS = {
    "w4a16": (lambda w, **kw: w4a16_quantize(w, get_scheme("w4a16-g32"), **kw)),
    "w4a16-lanes": (lambda w, **kw: w4a16_quantize(w, get_scheme("w4a16"), lane_order=True,
                                                   **kw)),
    "fp8": (lambda w, **kw: fp8_block_quantize(w, get_scheme("fp8-block"), **kw)),
    "int8": (lambda w, **kw: int8_quantize(w, get_scheme("int8"), **kw)),
    "none": (lambda w, **kw: bf16_quantize(w, NoQuant(), **kw)),
}


def _buffer_masters(experts, shape, dtype, device, skew=0):
    """Masters as views of one buffer in reverse order with gaps between them (Megatron's DDP
    buffer lays its params out in reverse, padded), shifted by `skew` elements."""
    n, k = shape
    size = n * k + 24
    buffer = torch.randn(skew + experts * size, device=device).to(dtype)
    masters = [buffer[skew + (experts - 1 - e) * size:][:n * k].view(n, k)
               for e in range(experts)]
    for e, m in enumerate(masters):
        m.mul_(1 + e)  # each expert its own magnitudes
    return masters


def _assert_same(got, want):
    assert got.shape == want.shape
    assert torch.equal(got.data.view(torch.uint8), want.data.view(torch.uint8))
    assert (got.scale is None and want.scale is None) or torch.equal(got.scale, want.scale)
    if want.lane_codes is not None:
        assert torch.equal(got.lane_codes[1], want.lane_codes[1])


@pytest.mark.parametrize("quantizer", sorted(QUANTIZERS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_masters_in_place_equal_their_stack(quantizer, dtype, device):
    quantize = QUANTIZERS[quantizer]
    masters = _buffer_masters(3, (72, 128), dtype, device)
    table = master_table(masters)
    assert table.shape == (3, 72, 128) and table.base.data_ptr() == masters[0].data_ptr()
    assert table.align == 16 // masters[0].element_size()  # the kernels' vector loads
    got = quantize(masters)
    _assert_same(got, quantize(torch.stack(masters)))
    if quantizer == "none":  # a new bf16 stack, never one of the masters
        assert got.data.data_ptr() not in {m.data_ptr() for m in masters}


@pytest.mark.parametrize("quantizer", sorted(QUANTIZERS))
def test_masters_off_16_bytes_are_stacked(quantizer, device):
    quantize = QUANTIZERS[quantizer]
    masters = _buffer_masters(2, (40, 128), torch.bfloat16, device, skew=1)
    table = master_table(masters)
    assert table.base.data_ptr() not in {m.data_ptr() for m in masters} and table.align == 8
    _assert_same(quantize(masters), quantize(torch.stack(masters)))


@pytest.mark.parametrize("quantizer", ["fp8", "int8", "none"])
def test_experts_off_16_bytes_in_a_stack(quantizer, device):
    """A stack whose experts do not start on 16 bytes: the kernels' loads without the hint."""
    torch.manual_seed(0)
    w = torch.randn(3, 7, 9, device=device)
    assert master_table(w).align == 1
    scheme = NoQuant() if quantizer == "none" else get_scheme(
        {"fp8": "fp8-block", "int8": "int8"}[quantizer])
    _assert_same(QUANTIZERS[quantizer](w), scheme.quantize_weight(w))


@pytest.mark.parametrize("quantizer", sorted(QUANTIZERS))
def test_separate_allocations_and_a_non_contiguous_master(quantizer, device):
    """Masters of their own allocations; one transposed view among them makes a stack."""
    quantize = QUANTIZERS[quantizer]
    torch.manual_seed(0)
    masters = [torch.randn(40, 128, device=device) * (e + 1) for e in range(2)]
    masters.append(torch.randn(128, 40, device=device).t())
    assert not masters[-1].is_contiguous()
    _assert_same(quantize(masters), quantize(torch.stack(masters)))
    _assert_same(quantize(masters[:2]), quantize(torch.stack(masters[:2])))


@pytest.mark.parametrize("quantizer", sorted(QUANTIZERS))
def test_nonfinite_in_one_expert_is_counted_and_named(quantizer, device):
    quantize = QUANTIZERS[quantizer]
    masters = _buffer_masters(3, (16, 128), torch.float32, device)
    masters[2][5, 7] = float("nan")
    counter = torch.zeros(1, dtype=torch.int32, device=device)
    quantize(masters, nonfinite=counter)
    assert int(counter) == 1
    with pytest.raises(QuantizationError, match="experts.linear_fc2: 1 NaN/inf"):
        quantize(masters, name="experts.linear_fc2")


def test_the_table_of_a_stacked_master_and_of_a_dense_one(device):
    w = torch.randn(2, 3, 16, 8, device=device)
    table = master_table(w)
    assert table.shape == (2, 3, 16, 8) and table.experts == 6
    assert table.offsets.tolist() == [e * 128 for e in range(6)]
    dense = master_table(w[0, 0])
    assert dense.offsets.tolist() == [0] and dense.shape == (16, 8)


def test_bad_masters_name_the_expert_and_the_fix(device):
    masters = [torch.randn(8, 16, device=device) for _ in range(3)]
    with pytest.raises(ValueError, match=r"fc1\[2\]: torch.float32 \(8, 8\) .* one shape"):
        master_table(masters[:2] + [masters[2][:, :8]], "fc1")
    with pytest.raises(ValueError, match=r"fc1\[1\]: torch.bfloat16 .* one shape, dtype"):
        master_table([masters[0], masters[1].bfloat16()], "fc1")
    with pytest.raises(ValueError, match="fc1: no expert masters given"):
        master_table([], "fc1")
    with pytest.raises(QuantizationError, match=r"fc1\[0\]: dtype torch.int8 cannot be"):
        master_table([torch.zeros(8, 16, dtype=torch.int8, device=device)], "fc1")


def test_the_reference_op_stacks_a_list_of_masters(device):
    """Unregistered (scheme, device): quant.ops' reference quantizes the stack, counting
    NaN/inf into the caller's counter as the kernels do."""
    scheme = get_scheme("w4a16-g32")
    masters = _buffer_masters(2, (32, 64), torch.float32, torch.device("cpu"))
    masters[1][0, 0] = float("inf")
    counter = torch.zeros(1, dtype=torch.int32)
    got = ops.quantize_weight(scheme, masters, "fc1", counter)
    want = scheme.quantize_weight(torch.stack(masters), check_finite=False)
    assert int(counter) == 1 and torch.equal(got.data, want.data)
    assert torch.equal(got.scale, want.scale)


#: each weight quantizer's kernel, its pointer and integer arguments and its constexprs
_KERNELS = {
    "w4a16": (w4a16_module._w4a16_quantize_kernel,
              ["*bf16", "*i64", "*i32", "*i32", "*bf16", "*i32", "i32", "i32"],
              {"GROUP": 128, "BLOCK_R": 32, "LANES": False, "SOFTWARE": False}, 4),
    "fp8": (fp8_module._fp8_weight_kernel,
            ["*bf16", "*i64", "*fp8e4nv", "*fp32", "i32", "i32", "i32", "i32"],
            {"BLOCK": 128}, 8),
    "int8": (int8_module._int8_rows_kernel,
             ["*bf16", "*i64", "*i8", "*fp32", "*i32", "i32", "i32", "i32", "i32", "i32"],
             {"BLOCK": 2048, "ONE_PASS": True, "TAIL": 0, "SWIGLU": False, "MASTERS": True,
              "PDL": False, "SOFTWARE": False}, 2),
    "none": (bf16_module._bf16_weight_kernel, ["*bf16", "*i64", "*bf16", "*i32", "i32"],
             {"BLOCK": 4096, "COPY": True, "SOFTWARE": False}, 8),
}


def _vector_loads_for_sm90() -> dict:
    """16-byte global loads in each kernel built for sm_90 with bf16 masters, with the table's
    alignment hint (8 elements) and without (1); every argument divisible by 16, as Triton
    specializes them at a launch on aligned tensors and sizes."""
    facts = {}
    for name, (fn, types, constexprs, warps) in _KERNELS.items():
        args = [a for a in fn.arg_names if a not in constexprs and a != "ALIGN"]
        for align in (8, 1):
            signature = dict(zip(args, types))
            signature.update({a: "constexpr" for a in [*constexprs, "ALIGN"]})
            attrs = {(i,): [["tt.divisibility", 16]] for i in range(len(args))}
            ptx = triton.compile(
                ASTSource(fn=fn, signature=signature, attrs=attrs,
                          constexprs={**constexprs, "ALIGN": align}),
                target=GPUTarget("cuda", 90, 32), options={"num_warps": warps}).asm["ptx"]
            facts[f"{name}/{align}"] = len(re.findall(r"ld\.global(\.\w+)*\.v4", ptx))
    return facts


def test_gpu_builds_load_the_masters_16_bytes_at_a_time():
    """The offsets come from memory, so the compiler knows nothing of their alignment: the
    hint (expert_offset's multiple_of) is what keeps the masters' loads 16 bytes wide."""
    facts = facts_of_child(__file__)
    for name in _KERNELS:
        assert facts[f"{name}/8"] >= 1 and facts[f"{name}/1"] == 0, (name, facts)


if __name__ == "__main__":
    serve_facts(_vector_loads_for_sm90)
