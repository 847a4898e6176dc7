"""`python -m megatron_qarl.train` (also under torchrun): parse and validate every flag, then
run the RL trainer and print where its results are."""
from __future__ import annotations

import logging
import multiprocessing
import os
import sys
from typing import List, Optional

from .trainer.flags import build_parser

_UNGUARDED_EXIT = 3  # a spawned helper that met an unguarded main() exits with this
_PROBE_ENV = "MEGATRON_QARL_LAUNCH_PROBE"  # set for the probe's helper: its parent reports
_UNGUARDED = ("megatron_qarl.train.main() runs when the launch script {script!r} is imported: "
              "Megatron's checkpoint writer starts a helper process with multiprocessing's "
              "'spawn' method, which re-imports that script, and the helper would start a "
              "second trainer that waits forever. Call main() under "
              "`if __name__ == \"__main__\":`, or launch `python -m megatron_qarl.train`.")


def _refuse_spawned_reimport() -> None:
    # `_inheriting` is set while a spawned child re-imports the parent's main module: the flag
    # CPython's own multiprocessing.spawn._check_not_importing_main reads.
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        if _PROBE_ENV not in os.environ:
            sys.stderr.write(_UNGUARDED.format(script=sys.argv[0]) + "\n")
        raise SystemExit(_UNGUARDED_EXIT)


def _nothing() -> None:
    """The launch-script probe's target."""


def _probe_launch_script(args) -> None:
    """Finds an unguarded launch script before any work, rather than at the first save (the
    spawned helper re-imports it). `-m megatron_qarl.train` is guarded and skips the probe."""
    from .trainer.validation import FlagError

    main_spec = getattr(sys.modules["__main__"], "__spec__", None)
    if args.save is None or getattr(main_spec, "name", None) == "megatron_qarl.train":
        return
    probe = multiprocessing.get_context("spawn").Process(target=_nothing)
    os.environ[_PROBE_ENV] = "1"
    try:
        probe.start()
    finally:
        del os.environ[_PROBE_ENV]
    probe.join()
    if probe.exitcode == _UNGUARDED_EXIT:
        raise FlagError(_UNGUARDED.format(script=sys.argv[0]))
    if probe.exitcode != 0:
        raise FlagError(f"the launch script {sys.argv[0]!r} failed (exit {probe.exitcode}) when "
                        f"a 'spawn' helper imported it, as Megatron's checkpoint writer will "
                        f"at --save; its error is above")


def main(argv: Optional[List[str]] = None) -> dict:
    _refuse_spawned_reimport()
    parser = build_parser()
    args = parser.parse_args(argv)  # --help ends here, before megatron-core is imported
    from .trainer.distributed import world_size_from_env
    from .trainer.validation import FlagError, validate

    try:
        validate(args, world_size_from_env())
        _probe_launch_script(args)
    except FlagError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")  # before any work starts
    # this package's choices (FP8 backend, decode graph) on the console; others stay at WARNING
    logging.basicConfig(format="%(name)s: %(message)s")
    logging.getLogger("megatron_qarl").setLevel(logging.INFO)
    from .rl.data import DatasetError
    from .rl.rewards import RewardError
    from .rollout.sglang.errors import EngineUnavailable
    from .trainer.checkpointing import CheckpointError
    from .trainer.distributed import shutdown_distributed
    from .trainer.trainer import RLTrainer, eval_label

    try:
        trainer = RLTrainer(args)
        try:
            summary = trainer.run()
        finally:
            trainer.engine.shutdown()  # stops SGLang servers the engine launched
    except (FlagError, DatasetError, CheckpointError, RewardError,
            EngineUnavailable) as err:  # found at work; an engine not there is not a bug
        sys.stderr.write(f"{parser.prog}: error: {err}\n")
        raise SystemExit(1) from None
    finally:
        shutdown_distributed()
    if trainer.is_logger and "reward_after" in summary:
        held_out = f"reward ({eval_label(args)}, {len(trainer.eval_rows)} held-out prompts)"
        if not trainer.eval_rows:
            print("\nno held-out prompts (--eval-prompt-data), so no held-out reward")
        elif args.train_iters == 0:  # the warm start's model, or the one loaded
            what = (f"step {trainer.step}'s model, no RL steps run" if trainer.step else
                    "warm start only" if args.sft_iters else "no RL steps")
            print(f"\n{what}: {held_out} {summary['reward_after']:.3f}")
        else:
            print(f"\n{held_out}: before RL {summary['reward_before']:.3f} -> after "
                  f"{summary['reward_after']:.3f}")
        print(f"metrics: {os.path.abspath(trainer.logger.path)}")
        if args.save:
            print(f"checkpoints: {os.path.abspath(args.save)}")
    if trainer.is_logger and "exited_at" in summary:
        print(f"\nstopped after step {summary['exited_at']} (--exit-interval), saved in "
              f"{os.path.abspath(args.save)}: run again with --load {args.save} to go on")
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
