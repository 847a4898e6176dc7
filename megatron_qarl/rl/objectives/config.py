"""Typed, validated configuration of the policy loss, and the trainer flags that fill it.

Every hyperparameter is validated when its config is built (all of them, whichever loss is
selected), and a bad value raises ValueError naming the flag, the valid range, what the
value means and how to fix it.

TBPO defaults are the paper's Table 2 (QaRL, Appendix B), read as:
    actor.seq_clip_ratio_high      0.0004  -> eps_h, A > 0 bound [0, 1 + eps_h]
    actor.seq_clip_ratio_low       0.0003  -> GSPO's lower sequence clip (TBPO does not use
                                              it: its A > 0 bound has no lower side)
    actor.neg_seq_clip_ratio_high  0.0007  -> delta_h, A < 0 band upper side
    actor.neg_seq_clip_ratio_low   0.0003  -> delta_l, A < 0 band lower side
    actor.seq_tis_imp_ratio_cap    2       -> c, w clipped to [1/c, c]
The table text is clean; the values are also consistent with GSPO's published sequence clip
range (3e-4 / 4e-4), which these ratios (geometric means, hence tiny) are on the scale of.
Table 2 sets no aggregation mode, so --loss-agg-mode keeps the common default token-mean.
"""
import argparse
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .aggregation import AGG_MODES, TOKEN_MEAN

LOSSES = ("grpo", "dapo", "dual_clip", "gspo", "tbpo")
MISMATCH_CORRECTIONS = ("none", "tis", "tis2", "mis")
# DAPO's clip-higher upper epsilon; --loss dapo differs from grpo only by this default.
DAPO_CLIP_RATIO_HIGH = 0.28


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _check_number(name: str, value: Any, meaning: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{_flag(name)} must be a finite number: got {value!r}; it is {meaning}")


def _check_unit_interval(name: str, value: float, meaning: str) -> None:
    """[0, 1): a lower epsilon of 1 or more would let the lower bound reach 0."""
    _check_number(name, value, meaning)
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{_flag(name)} must be in [0, 1): got {value}; it is {meaning}")


def _check_non_negative(name: str, value: float, meaning: str) -> None:
    _check_number(name, value, meaning)
    if value < 0.0:
        raise ValueError(f"{_flag(name)} must be >= 0: got {value}; it is {meaning}")


def _check_above_one(name: str, value: float, meaning: str) -> None:
    _check_number(name, value, meaning)
    if value <= 1.0:
        raise ValueError(f"{_flag(name)} must be > 1: got {value}; it is {meaning}")


@dataclass(frozen=True)
class TokenClipConfig:
    """Token-level PPO clip of grpo, dapo and dual_clip: bounds [1 - eps_l, 1 + eps_h]."""

    clip_ratio_low: float = 0.2
    # None: PolicyLossConfig resolves it, to 0.28 for dapo and to clip_ratio_low otherwise.
    clip_ratio_high: float | None = None
    dual_clip_ratio_c: float = 3.0

    def __post_init__(self) -> None:
        _check_unit_interval("clip_ratio_low", self.clip_ratio_low,
                             "eps_low, token ratios below 1 - eps_low are clipped when A < 0")
        if self.clip_ratio_high is not None:
            _check_non_negative("clip_ratio_high", self.clip_ratio_high,
                                "eps_high, token ratios above 1 + eps_high are clipped when A > 0 "
                                f"(DAPO clip-higher uses {DAPO_CLIP_RATIO_HIGH})")
        _check_above_one("dual_clip_ratio_c", self.dual_clip_ratio_c,
                         "c, the dual-clip upper bound on the token ratio when A < 0 "
                         "(Ye et al. 2020 use 3)")


@dataclass(frozen=True)
class GSPOConfig:
    """GSPO sequence clip [1 - seq_clip_ratio_low, 1 + seq_clip_ratio_high]."""

    seq_clip_ratio_low: float = 3e-4
    seq_clip_ratio_high: float = 4e-4

    def __post_init__(self) -> None:
        _check_unit_interval("seq_clip_ratio_low", self.seq_clip_ratio_low,
                             "the lower sequence-ratio clip of GSPO (paper Table 2: 0.0003)")
        _check_non_negative("seq_clip_ratio_high", self.seq_clip_ratio_high,
                            "eps_h, the upper sequence-ratio bound (paper Table 2: 0.0004)")


@dataclass(frozen=True)
class TBPOConfig:
    """TBPO trust band (paper Section 3.2, Table 2 defaults)."""

    seq_clip_ratio_high: float = 4e-4
    neg_seq_clip_ratio_low: float = 3e-4
    neg_seq_clip_ratio_high: float = 7e-4
    seq_tis_imp_ratio_cap: float = 2.0

    def __post_init__(self) -> None:
        _check_non_negative("seq_clip_ratio_high", self.seq_clip_ratio_high,
                            "eps_h: A > 0 sequences with ratio above 1 + eps_h are masked "
                            "(paper Table 2: 0.0004)")
        _check_unit_interval("neg_seq_clip_ratio_low", self.neg_seq_clip_ratio_low,
                             "delta_l of the TBPO band [1 - delta_l, 1 + delta_h] for A < 0 "
                             "(paper Table 2: 0.0003)")
        _check_non_negative("neg_seq_clip_ratio_high", self.neg_seq_clip_ratio_high,
                            "delta_h of the TBPO band [1 - delta_l, 1 + delta_h] for A < 0 "
                            "(paper Table 2: 0.0007)")
        _check_above_one("seq_tis_imp_ratio_cap", self.seq_tis_imp_ratio_cap,
                         "c, the sequence mismatch weight is clipped to [1/c, c] "
                         "(paper Table 2: 2)")


@dataclass(frozen=True)
class MismatchConfig:
    """Sampler/learner mismatch correction for the objectives without their own (not tbpo)."""

    tis_imp_ratio_cap: float = 2.0
    mis_ratio_low: float = 0.5
    mis_ratio_high: float = 2.0

    def __post_init__(self) -> None:
        _check_above_one("tis_imp_ratio_cap", self.tis_imp_ratio_cap,
                         "C of truncated importance sampling, weights are capped at C "
                         "(tis2: clipped to [1/C, C])")
        _check_number("mis_ratio_low", self.mis_ratio_low, "the MIS band's lower end")
        _check_number("mis_ratio_high", self.mis_ratio_high, "the MIS band's upper end")
        if not 0.0 < self.mis_ratio_low <= 1.0:
            raise ValueError(f"--mis-ratio-low must be in (0, 1]: got {self.mis_ratio_low}; "
                             "sequences whose mismatch weight is below it are masked, and a "
                             "band that excludes 1 would mask on-policy sequences")
        if self.mis_ratio_high < 1.0:
            raise ValueError(f"--mis-ratio-high must be >= 1: got {self.mis_ratio_high}; "
                             "sequences whose mismatch weight is above it are masked, and a "
                             "band that excludes 1 would mask on-policy sequences")


@dataclass(frozen=True)
class PolicyLossConfig:
    """Which objective, which mismatch correction, how to aggregate, and all hyperparameters."""

    loss: str = "tbpo"
    mismatch_correction: str = "none"
    loss_agg_mode: str = TOKEN_MEAN
    token_clip: TokenClipConfig = field(default_factory=TokenClipConfig)
    gspo: GSPOConfig = field(default_factory=GSPOConfig)
    tbpo: TBPOConfig = field(default_factory=TBPOConfig)
    mismatch: MismatchConfig = field(default_factory=MismatchConfig)

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"--loss must be one of {', '.join(LOSSES)}: got {self.loss!r}")
        if self.mismatch_correction not in MISMATCH_CORRECTIONS:
            raise ValueError(f"--mismatch-correction must be one of "
                             f"{', '.join(MISMATCH_CORRECTIONS)}: got {self.mismatch_correction!r}")
        if self.loss_agg_mode not in AGG_MODES:
            raise ValueError(f"--loss-agg-mode must be one of {', '.join(AGG_MODES)}: "
                             f"got {self.loss_agg_mode!r}")
        if self.loss == "tbpo" and self.mismatch_correction != "none":
            raise ValueError(f"--mismatch-correction {self.mismatch_correction} cannot be "
                             "combined with --loss tbpo: TBPO applies its own clipped sequence "
                             "mismatch weight (set --seq-tis-imp-ratio-cap); use "
                             "--mismatch-correction none")
        if self.token_clip.clip_ratio_high is None:
            high = DAPO_CLIP_RATIO_HIGH if self.loss == "dapo" else self.token_clip.clip_ratio_low
            # frozen dataclass: resolving a default at construction is the one write allowed
            object.__setattr__(self, "token_clip", replace(self.token_clip, clip_ratio_high=high))

    @property
    def needs_sampler_logprobs(self) -> bool:
        return self.loss == "tbpo" or self.mismatch_correction != "none"

    @classmethod
    def from_flags(cls, flags: argparse.Namespace | Mapping[str, Any],
                   refuse_unread: bool = True) -> "PolicyLossConfig":
        """Build from parsed flags (dest names as in add_policy_loss_args); absent or None
        values take the defaults. refuse_unread: a hyperparameter flag the chosen loss and
        correction never read is an error (off where no loss will run)."""
        get = flags.get if isinstance(flags, Mapping) else (lambda key: getattr(flags, key, None))
        given = {name: value for name in _FLAG_DESTS if (value := get(name)) is not None}

        def pick(config_cls):
            return config_cls(**{f.name: given[f.name] for f in fields(config_cls) if f.name in given})

        if refuse_unread:
            _refuse_unread(given)
        return cls(
            loss=given.get("loss", cls.loss),
            mismatch_correction=given.get("mismatch_correction", cls.mismatch_correction),
            loss_agg_mode=given.get("loss_agg_mode", cls.loss_agg_mode),
            token_clip=pick(TokenClipConfig),
            gspo=pick(GSPOConfig),
            tbpo=pick(TBPOConfig),
            mismatch=pick(MismatchConfig),
        )


_FLAG_HELP = {
    "clip_ratio_low": "token PPO clip eps_low (grpo, dapo, dual_clip)",
    "clip_ratio_high": f"token PPO clip eps_high; default {DAPO_CLIP_RATIO_HIGH} for dapo, "
                       "else --clip-ratio-low",
    "dual_clip_ratio_c": "dual-clip bound c on the token ratio when A < 0 (dual_clip)",
    "seq_clip_ratio_low": "GSPO lower sequence clip",
    "seq_clip_ratio_high": "sequence ratio bound 1 + eps_h for A > 0 (gspo, tbpo)",
    "neg_seq_clip_ratio_low": "TBPO delta_l: A < 0 band lower side 1 - delta_l",
    "neg_seq_clip_ratio_high": "TBPO delta_h: A < 0 band upper side 1 + delta_h",
    "seq_tis_imp_ratio_cap": "TBPO cap c: sequence mismatch weight clipped to [1/c, c]",
    "tis_imp_ratio_cap": "TIS cap C (tis: min(w, C); tis2: clip(w, 1/C, C))",
    "mis_ratio_low": "MIS: mask sequences whose mismatch weight is below this (the kept "
                     "ones are weighted by it)",
    "mis_ratio_high": "MIS: mask sequences whose mismatch weight is above this",
}
_FLAG_DESTS = ("loss", "mismatch_correction", "loss_agg_mode", *_FLAG_HELP)
#: each hyperparameter flag's default (its config dataclass field's)
_FLAG_DEFAULTS = {f.name: f.default for cfg in (TokenClipConfig, GSPOConfig, TBPOConfig,
                                                MismatchConfig) for f in fields(cfg)}
#: the losses (or mismatch corrections) that read each flag: another's value is refused, not
#: ignored (--loss tbpo --clip-ratio-low 0.1 ran with TBPO's band)
_READ_BY = {
    "clip_ratio_low": ("grpo", "dapo", "dual_clip"),
    "clip_ratio_high": ("grpo", "dapo", "dual_clip"),
    "dual_clip_ratio_c": ("dual_clip",), "seq_clip_ratio_low": ("gspo",),
    "seq_clip_ratio_high": ("gspo", "tbpo"), "neg_seq_clip_ratio_low": ("tbpo",),
    "neg_seq_clip_ratio_high": ("tbpo",), "seq_tis_imp_ratio_cap": ("tbpo",),
    "tis_imp_ratio_cap": ("tis", "tis2"), "mis_ratio_low": ("mis",), "mis_ratio_high": ("mis",),
}


def _refuse_unread(given: dict) -> None:
    """A flag set away from its default that the chosen loss and correction never read."""
    chosen = (given.get("loss", PolicyLossConfig.loss),
              given.get("mismatch_correction", PolicyLossConfig.mismatch_correction))
    for name, readers in _READ_BY.items():
        if name in given and given[name] != _FLAG_DEFAULTS[name] and not set(chosen) & set(readers):
            raise ValueError(f"{_flag(name)} {given[name]} is read by {' / '.join(readers)} "
                             f"only, not by --loss {chosen[0]} with --mismatch-correction "
                             f"{chosen[1]}: drop it")


def add_policy_loss_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register the policy-loss flags; read them back with PolicyLossConfig.from_flags."""
    group = parser.add_argument_group("policy loss")
    group.add_argument("--loss", choices=LOSSES, default=PolicyLossConfig.loss,
                       help="policy objective")
    group.add_argument("--mismatch-correction", choices=MISMATCH_CORRECTIONS,
                       default=PolicyLossConfig.mismatch_correction,
                       help="sampler/learner mismatch correction (must be none with tbpo)")
    group.add_argument("--loss-agg-mode", choices=AGG_MODES, default=PolicyLossConfig.loss_agg_mode,
                       help="how token losses are reduced to the scalar loss")
    for name, help_text in _FLAG_HELP.items():
        default = _FLAG_DEFAULTS[name]
        suffix = "" if default is None else f" (default {default})"
        group.add_argument(_flag(name), type=float, default=default, help=help_text + suffix)
    return parser
