"""The RL trainer: flags (`flags.py`) and their validation (`validation.py`), the loop
(`trainer.py`), checkpoints, metrics. Nothing is imported here, so that parsing the command
line (`--help`) does not wait for megatron-core."""
