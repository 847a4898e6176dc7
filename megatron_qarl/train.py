"""`python -m megatron_qarl.train` (also under torchrun): parse and validate every flag, then
run the RL trainer and print where its results are."""
from __future__ import annotations

import os
import sys
from typing import List, Optional

from .trainer.flags import build_parser


def main(argv: Optional[List[str]] = None) -> dict:
    parser = build_parser()
    args = parser.parse_args(argv)  # --help ends here, before megatron-core is imported
    from .trainer.distributed import world_size_from_env
    from .trainer.validation import FlagError, validate

    try:
        validate(args, world_size_from_env())
    except FlagError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")  # before any work starts
    from .rl.data import DatasetError
    from .trainer.checkpointing import CheckpointError
    from .trainer.distributed import shutdown_distributed
    from .trainer.trainer import RLTrainer

    try:
        trainer = RLTrainer(args)
        try:
            summary = trainer.run()
        finally:
            trainer.engine.shutdown()  # stops SGLang servers the engine launched
    except (FlagError, DatasetError, CheckpointError) as err:  # found once inputs are read
        sys.stderr.write(f"{parser.prog}: error: {err}\n")
        raise SystemExit(1) from None
    finally:
        shutdown_distributed()
    if trainer.is_logger and "reward_after" in summary:
        held_out = f"reward (greedy, {len(trainer.eval_rows)} held-out prompts)"
        if not trainer.eval_rows:
            print("\nno held-out prompts (--eval-prompt-data), so no greedy reward")
        elif args.train_iters == 0:
            print(f"\nwarm start only: {held_out} {summary['reward_after']:.3f}")
        else:
            print(f"\n{held_out}: before RL {summary['reward_before']:.3f} -> after "
                  f"{summary['reward_after']:.3f}")
        print(f"metrics: {os.path.abspath(trainer.logger.path)}")
        if args.save:
            print(f"checkpoints: {os.path.abspath(args.save)}")
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
