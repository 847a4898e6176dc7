"""model_params numbers experts across expert-parallel ranks from the model chunk's Megatron
config: an expert weight it cannot number was published as a dense weight of rank 0's."""
from types import SimpleNamespace

import pytest
import torch
from torch import nn

from megatron_qarl.rollout.publish import model_params


def _model(grouped: bool = False):
    """A module tree whose one parameter is decoder.layers.0.mlp.experts.
    local_experts.0.linear_fc1.weight (SequentialMLP's spelling) or, grouped,
    experts.linear_fc1.weight0 (TE's GroupedMLP's)."""
    experts = nn.Module()
    if grouped:
        experts.linear_fc1 = nn.Module()
        experts.linear_fc1.register_parameter("weight0", nn.Parameter(torch.zeros(4, 4)))
    else:
        experts.local_experts = nn.ModuleList(
            [nn.ModuleDict({"linear_fc1": nn.Linear(4, 4, bias=False)})])
    root = nn.Module()
    root.decoder = nn.ModuleDict({"layers": nn.ModuleList(
        [nn.ModuleDict({"mlp": nn.ModuleDict({"experts": experts})})])})
    return root


def test_an_expert_weight_without_the_models_config_is_refused():
    with pytest.raises(ValueError, match=r"local_experts\.0\.linear_fc1\.weight: an expert "
                                         r"weight in a model chunk without Megatron's config"):
        list(model_params(_model()))


def test_experts_in_the_grouped_layout_are_refused():
    model = _model(grouped=True)
    model.config = SimpleNamespace(num_moe_experts=2, expert_model_parallel_size=1)
    with pytest.raises(ValueError, match=r"linear_fc1\.weight0: experts in the grouped layout"):
        list(model_params(model))


def test_a_model_with_its_config_numbers_its_experts():
    model = _model()
    model.config = SimpleNamespace(num_moe_experts=8, expert_model_parallel_size=4)
    [param] = list(model_params(model))
    assert param.name == "decoder.layers.0.mlp.experts.local_experts.0.linear_fc1.weight"
    assert param.partition.experts_per_rank == 2
