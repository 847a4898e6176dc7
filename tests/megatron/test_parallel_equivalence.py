"""TP=2, EP=2 and TP=2 x EP=2 (expert-TP 1) on two gloo processes give the loss and gradients
of TP=1 EP=1 for the same weights (fp32; summation order differs across layouts), and so do
the experts' gradients under TP=2 with expert-TP 1 once DDP has reduced them."""
import pytest

from megatron_qarl.compat.cpu_testing import run_distributed

from parallel_cases import LAYOUTS, compare_layouts, ddp_expert_grads, quantized_shards

CASES = {  # scheme: layouts it can take (FP8 128-row blocks forbid splitting 128-wide experts)
    "w4a16-g32": ["tp2", "ep2", "tp2-ep2-etp1"],
    "fp8-block": ["ep2", "tp2-ep2-etp1"],
    "none+grouped": ["tp2", "ep2", "tp2-ep2-etp1"],  # bf16 grouped experts (--moe-grouped-gemm)
}


@pytest.mark.parametrize("case", list(CASES))
def test_parallel_layouts_match_single_rank(case):
    scheme, _, grouped = case.partition("+")
    per_rank = run_distributed(compare_layouts, 2, scheme, CASES[case], grouped == "grouped")
    for rank, results in enumerate(per_rank):
        for layout, (loss_rel, grad_rel) in results.items():
            assert loss_rel < 1e-5, (rank, layout, loss_rel)
            assert grad_rel < 1e-4, (rank, layout, grad_rel)


def test_tp2_expert_tp1_ddp_sums_the_expert_grads_over_the_tp_ranks():
    """megatron-core reduced these over the data-parallel group (size 1 here), so each TP rank
    kept the gradient of its own tokens only (compat/expert_grads.py)."""
    for rank, (count, grad_rel) in enumerate(run_distributed(ddp_expert_grads, 2, "w4a16-g32")):
        assert count > 0 and grad_rel < 1e-4, (rank, count, grad_rel)


def test_quantized_tensors_name_their_piece_of_the_tp1_weight():
    """iter_quantized_weights' metadata (global expert index; partition dim and stride, 2 for
    fc1's [gate_r; up_r]; rank and size of the group that splits the weight) locates each
    rank's quantized tensor in the TP=1 model's quantized weight."""
    layouts = ["tp2", "ep2", "tp2-ep2-etp1"]
    for rank, results in enumerate(run_distributed(quantized_shards, 2, "w4a16-g32", layouts)):
        for layout, (count, wrong) in results.items():
            local_experts = 4 // LAYOUTS[layout][1]  # the tiny model's 4 experts over EP
            assert count == 2 * (2 + 2 * local_experts), (rank, layout, count)
            assert wrong == [], (rank, layout, wrong)
