"""Every invalid hyperparameter is rejected with an error naming its flag."""
import argparse
import math
import re

import pytest
import torch

from megatron_qarl.rl.objectives import (
    GSPOConfig,
    MismatchConfig,
    PolicyLossConfig,
    TBPOConfig,
    TokenClipConfig,
    add_policy_loss_args,
    compute_policy_loss,
)

INVALID = [
    (TBPOConfig, "neg_seq_clip_ratio_low", 1.0, "--neg-seq-clip-ratio-low must be in [0, 1)"),
    (TBPOConfig, "neg_seq_clip_ratio_low", 1.2, "--neg-seq-clip-ratio-low must be in [0, 1): got 1.2"),
    (TBPOConfig, "neg_seq_clip_ratio_low", -1e-4, "--neg-seq-clip-ratio-low must be in [0, 1)"),
    (TBPOConfig, "neg_seq_clip_ratio_high", -1e-4, "--neg-seq-clip-ratio-high must be >= 0"),
    (TBPOConfig, "seq_clip_ratio_high", -1e-4, "--seq-clip-ratio-high must be >= 0"),
    (TBPOConfig, "seq_tis_imp_ratio_cap", 1.0, "--seq-tis-imp-ratio-cap must be > 1"),
    (TBPOConfig, "seq_tis_imp_ratio_cap", 0.5, "--seq-tis-imp-ratio-cap must be > 1"),
    (TBPOConfig, "seq_tis_imp_ratio_cap", math.inf, "--seq-tis-imp-ratio-cap must be a finite number"),
    (TBPOConfig, "seq_clip_ratio_high", math.nan, "--seq-clip-ratio-high must be a finite number"),
    (TBPOConfig, "neg_seq_clip_ratio_high", "0.1", "--neg-seq-clip-ratio-high must be a finite number"),
    (TokenClipConfig, "clip_ratio_low", -0.1, "--clip-ratio-low must be in [0, 1)"),
    (TokenClipConfig, "clip_ratio_low", 1.0, "--clip-ratio-low must be in [0, 1)"),
    (TokenClipConfig, "clip_ratio_high", -0.1, "--clip-ratio-high must be >= 0"),
    (TokenClipConfig, "dual_clip_ratio_c", 1.0, "--dual-clip-ratio-c must be > 1"),
    (GSPOConfig, "seq_clip_ratio_low", 1.0, "--seq-clip-ratio-low must be in [0, 1)"),
    (GSPOConfig, "seq_clip_ratio_high", -1.0, "--seq-clip-ratio-high must be >= 0"),
    (MismatchConfig, "tis_imp_ratio_cap", 1.0, "--tis-imp-ratio-cap must be > 1"),
    (MismatchConfig, "mis_ratio_low", 0.0, "--mis-ratio-low must be in (0, 1]"),
    (MismatchConfig, "mis_ratio_low", 1.5, "--mis-ratio-low must be in (0, 1]"),
    (MismatchConfig, "mis_ratio_high", 0.9, "--mis-ratio-high must be >= 1"),
]


@pytest.mark.parametrize("config_cls, name, value, message", INVALID)
def test_invalid_hyperparameter_rejected(config_cls, name, value, message):
    with pytest.raises(ValueError) as error:
        config_cls(**{name: value})
    assert message in str(error.value)
    assert "; it is" in str(error.value) or "masked" in str(error.value)  # says what it means


@pytest.mark.parametrize("kwargs, message", [
    ({"loss": "ppo"}, "--loss must be one of"),
    ({"mismatch_correction": "is"}, "--mismatch-correction must be one of"),
    ({"loss_agg_mode": "mean"}, "--loss-agg-mode must be one of"),
    ({"loss": "tbpo", "mismatch_correction": "tis"}, "use --mismatch-correction none"),
])
def test_invalid_choice_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PolicyLossConfig(**kwargs)


def test_flags_validated_through_the_parser():
    parser = add_policy_loss_args(argparse.ArgumentParser())
    args = parser.parse_args(["--loss", "tbpo", "--neg-seq-clip-ratio-low", "1.2"])
    with pytest.raises(ValueError, match=r"--neg-seq-clip-ratio-low must be in \[0, 1\): got 1.2"):
        PolicyLossConfig.from_flags(args)


@pytest.mark.parametrize("argv, message", [
    (["--loss", "tbpo", "--clip-ratio-low", "0.5"],
     "--clip-ratio-low 0.5 is read by grpo / dapo / dual_clip only, not by --loss tbpo"),
    (["--loss", "grpo", "--dual-clip-ratio-c", "5"], "--dual-clip-ratio-c 5.0 is read by dual_clip"),
    (["--loss", "grpo", "--mis-ratio-low", "0.3"], "--mis-ratio-low 0.3 is read by mis only"),
    (["--loss", "gspo", "--mismatch-correction", "mis", "--tis-imp-ratio-cap", "3"],
     "--tis-imp-ratio-cap 3.0 is read by tis / tis2 only"),
])
def test_a_flag_the_chosen_loss_never_reads_is_refused(argv, message):
    """They ran, silently ignored (a review: --loss tbpo --clip-ratio-low 0.5 trained with
    TBPO's band)."""
    parser = add_policy_loss_args(argparse.ArgumentParser())
    with pytest.raises(ValueError, match=re.escape(message)):
        PolicyLossConfig.from_flags(parser.parse_args(argv))
    assert PolicyLossConfig.from_flags(parser.parse_args(argv[:2])).loss == argv[1]


def test_parser_round_trip_and_defaults():
    parser = add_policy_loss_args(argparse.ArgumentParser())
    cfg = PolicyLossConfig.from_flags(parser.parse_args([]))
    assert cfg == PolicyLossConfig()
    cfg = PolicyLossConfig.from_flags(parser.parse_args(
        ["--loss", "gspo", "--mismatch-correction", "tis2", "--loss-agg-mode", "seq-mean-token-mean",
         "--seq-clip-ratio-high", "0.001", "--tis-imp-ratio-cap", "3"]))
    assert (cfg.loss, cfg.mismatch_correction, cfg.loss_agg_mode) == ("gspo", "tis2", "seq-mean-token-mean")
    assert cfg.gspo.seq_clip_ratio_high == 0.001 and cfg.tbpo.seq_clip_ratio_high == 0.001
    assert cfg.mismatch.tis_imp_ratio_cap == 3.0


def test_missing_sampler_logprobs_and_bad_shapes_rejected():
    lp, mask = torch.zeros(2, 3), torch.ones(2, 3)
    with pytest.raises(ValueError, match="needs sampler_logprobs"):
        compute_policy_loss(PolicyLossConfig(loss="tbpo"), lp, lp, torch.zeros(2), mask)
    with pytest.raises(ValueError, match="advantages must be one value per sequence"):
        compute_policy_loss(PolicyLossConfig(loss="grpo"), lp, lp, torch.zeros(2, 3), mask)
    with pytest.raises(ValueError, match="old_logprobs must have the shape"):
        compute_policy_loss(PolicyLossConfig(loss="grpo"), lp, torch.zeros(2, 4), torch.zeros(2), mask)
