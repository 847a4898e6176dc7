"""The flag checks one at a time, on the parsed flags alone (no model, no process group): each
refusal names the flag and its fix, and the value just inside each bound is taken."""
import pytest

from megatron_qarl.trainer.flags import build_parser
from megatron_qarl.trainer.validation import (
    FlagError,
    _batches,
    _checkpoints,
    _data,
    _lr_schedules,
    _model_overrides,
    _numbers,
    _parallel,
)


def _args(*argv):
    return build_parser().parse_args(["--device", "cpu", *argv])


@pytest.mark.parametrize("argv, dp, message", [
    (("--rollout-batch-size", "3", "--n-samples-per-prompt", "4", "--global-batch-size", "4"), 2,
     "--rollout-batch-size 3 must be a multiple of the data-parallel size 2"),
    (("--sft-batch-size", "3"), 2, "--sft-batch-size 3 must be a multiple of the data-parallel "
     "size 2"),
    (("--rollout-batch-size", "6", "--global-batch-size", "16", "--sft-batch-size", "6"), 3,
     "--global-batch-size 16 must be a multiple of the data-parallel size 3"),
    (("--micro-batch-size", "5"), 2, "--micro-batch-size 5 must divide the 32 responses per "
     "rank"),
    (("--max-tokens-per-micro-batch", "63"), 1, "--max-tokens-per-micro-batch 63 is below "
     "--seq-length 64"),
    (("--rollout-max-new-tokens", "64"), 1, "--rollout-max-new-tokens 64 leaves no room"),
    (("--eval-samples-per-prompt", "0"), 1, "--eval-samples-per-prompt must be >= 1, got 0"),
])
def test_batches_that_do_not_split_are_refused(argv, dp, message):
    with pytest.raises(FlagError, match=message):
        _batches(_args(*argv), dp)


def test_batches_just_inside_the_bounds_are_taken():
    _batches(_args(), 2)  # 8 prompts x 8 responses, 64 a step, 32 a rank in micro-batches of 8
    _batches(_args("--micro-batch-size", "5", "--max-tokens-per-micro-batch", "64",
                   "--rollout-max-new-tokens", "63"), 2)


@pytest.mark.parametrize("argv, message", [
    (("--adam-eps", "0"), "--adam-eps must be > 0, got 0.0"),
    (("--eval-temperature", "-0.5"), "--eval-temperature must be >= 0"),
    (("--clip-grad", "-1"), "--clip-grad must be >= 0, got -1.0"),
    (("--adam-beta2", "1"), r"--adam-beta2 must be in \[0, 1\)"),
])
def test_optimizer_and_sampling_numbers_out_of_range_are_refused(argv, message):
    with pytest.raises(FlagError, match=message):
        _numbers(_args(*argv))


@pytest.mark.parametrize("argv, message", [
    (("--min-lr", "1e-4", "--lr", "1e-5", "--lr-decay-style", "cosine"),
     "--min-lr 0.0001 is above --lr 1e-05: the decay ends at --min-lr"),
    (("--min-lr", "1e-6"), "--min-lr changes nothing with --lr-decay-style constant"),
    (("--sft-min-lr", "1e-4", "--sft-iters", "10"),
     "--sft-min-lr changes nothing with --sft-lr-decay-style constant"),
    (("--sft-min-lr", "2e-3", "--sft-lr-decay-style", "linear"),
     "--sft-min-lr 0.002 is above --sft-lr 0.001"),
    (("--lr-warmup-iters", "20"), "--lr-warmup-iters 20 must be below --train-iters 20"),
    (("--lr-warmup-iters", "5", "--lr-decay-iters", "5", "--lr-decay-style", "linear"),
     "--lr-warmup-iters 5 must be below --lr-decay-iters 5"),
    (("--sft-iters", "10", "--sft-lr-warmup-iters", "10"),
     "--sft-lr-warmup-iters 10 must be below --sft-iters 10"),
    (("--lr-decay-iters", "30"), "--lr-decay-iters changes nothing with --lr-decay-style "
     "constant"),
    (("--lr-warmup-init", "1e-6"), "--lr-warmup-init changes nothing without --lr-warmup-iters"),
    (("--lr-warmup-init", "1e-4", "--lr-warmup-iters", "2"),
     "--lr-warmup-init 0.0001 is above --lr 1e-05"),
    (("--lr-warmup-iters", "-1"), "--lr-warmup-iters must be >= 0, got -1"),
])
def test_lr_schedules_megatron_would_assert_on_are_refused_by_flag(argv, message):
    with pytest.raises(FlagError, match=message):
        _lr_schedules(_args(*argv))


def test_lr_schedules_just_inside_the_bounds_are_taken():
    _lr_schedules(_args("--lr-warmup-iters", "19", "--lr-decay-style", "cosine", "--min-lr",
                        "1e-5", "--lr-warmup-init", "1e-5"))
    _lr_schedules(_args("--lr-warmup-iters", "29", "--lr-decay-iters", "30",
                        "--lr-decay-style", "linear"))
    _lr_schedules(_args("--sft-iters", "10", "--sft-lr-warmup-iters", "9",
                        "--sft-lr-decay-style", "inverse-square-root", "--sft-min-lr", "1e-3"))
    # a phase that does not run checks no span: a warm start only, no warm start
    _lr_schedules(_args("--train-iters", "0", "--lr-warmup-iters", "5", "--sft-iters", "3"))
    _lr_schedules(_args("--train-iters", "0", "--lr-warmup-iters", "5", "--lr-decay-iters", "5",
                        "--lr-decay-style", "linear"))
    _lr_schedules(_args("--sft-lr-warmup-iters", "5"))


def test_data_flags(tmp_path):
    data = tmp_path / "train.jsonl"
    data.write_text('{"prompt": "1+1=", "answer": "2"}\n')
    for argv, message in [
        (("--synthetic-digits", "0"), "--synthetic-digits must be >= 1"),
        (("--tokenizer-type", "hf"), "--tokenizer-type hf needs --tokenizer-model PATH"),
        (("--tokenizer-type", "hf", "--tokenizer-model", str(data)), "is not a directory"),
        (("--prompt-template", "chat-boxed"), "needs a tokenizer with a chat template"),
        (("--prompt-data", str(tmp_path / "none.jsonl")), "no such file"),
    ]:
        with pytest.raises(FlagError, match=message):
            _data(_args(*argv))
    # a file of prompts with a held-out file beside it evaluates during the run
    _data(_args("--prompt-data", str(data), "--eval-prompt-data", str(data),
                "--eval-interval", "2"))


def test_checkpoint_flags(tmp_path):
    run = tmp_path / "run"
    (run / "iter_0000003").mkdir(parents=True)
    (run / "latest_checkpointed_iteration.txt").write_text("3")
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    for argv, message in [
        (("--save", str(tmp_path / "new"), "--ckpt-step", "3"), "--ckpt-step needs --load"),
        (("--save", str(run), "--load", str(run), "--ckpt-step", "5"),
         r"--ckpt-step 5 is not in --load .* \(available: 3\)"),
        ((), "give --save DIR"),
        (("--save", str(not_a_folder)), "exists and is not a directory"),
    ]:
        with pytest.raises(FlagError, match=message):
            _checkpoints(_args(*argv))
    _checkpoints(_args("--save", str(run), "--load", str(run), "--ckpt-step", "3"))


def test_parallel_and_model_sizes():
    with pytest.raises(FlagError, match="--expert-model-parallel-size 4 x "
                                        "--expert-tensor-parallel-size 1 does not divide the 2"):
        _parallel(_args("--expert-model-parallel-size", "4"), world_size=2)
    with pytest.raises(FlagError, match="--hidden-size must be >= 1, got 0"):
        _model_overrides(_args("--hidden-size", "0"))
