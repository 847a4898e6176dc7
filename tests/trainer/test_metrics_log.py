"""metrics.jsonl across a resume: the records logged after the resumed checkpoint are dropped,
since the resumed run logs those steps again (every resume duplicated them, and a re-run of a
finished run its final eval and summary: a review). A file that does not begin with what the
checkpoint saw is kept whole, and so is one the checkpoint's mark was not made for (a warm
start copied into a new run's folder)."""
import json
import logging
import sys
from types import SimpleNamespace

from megatron_qarl.trainer.metrics import MetricsLogger


def _events(path):
    return [(r["event"], r["step"]) for r in map(json.loads, open(path))]


def test_a_resume_drops_what_was_logged_after_its_checkpoint(tmp_path):
    path = str(tmp_path / "metrics.jsonl")
    first = MetricsLogger(path, enabled=True)
    first.log("train", 1, {"loss": 0.5})
    mark = first.mark()  # the checkpoint at step 1
    first.log("train", 2, {"loss": 0.4})
    first.log("eval", 2, {"eval_reward": 0.9})
    first.close()

    resumed = MetricsLogger(path, enabled=True, resume_mark=mark)
    assert _events(path) == [("train", 1)]
    resumed.log("train", 2, {"loss": 0.4})
    second_mark = resumed.mark()
    resumed.close()
    assert _events(path) == [("train", 1), ("train", 2)]
    again = MetricsLogger(path, enabled=True, resume_mark=second_mark)  # nothing after it
    again.close()
    assert _events(path) == [("train", 1), ("train", 2)]


def test_a_file_the_checkpoint_did_not_see_is_moved_aside(tmp_path, caplog):
    saw = tmp_path / "saw.jsonl"
    logger = MetricsLogger(str(saw), enabled=True)
    logger.log("train", 1, {"loss": 0.5})
    mark = logger.mark()
    logger.close()
    saw.write_text(json.dumps({"event": "eval", "step": 0, "eval_reward": 0.1}) + "\n" * 40)
    before = saw.read_bytes()  # the same file, rewritten since the checkpoint
    with caplog.at_level(logging.WARNING):
        MetricsLogger(str(saw), enabled=True, resume_mark=mark).close()
    assert (tmp_path / "saw.jsonl.1").read_bytes() == before and saw.read_bytes() == b""
    assert "held records not the resumed checkpoint's; moved them to" in caplog.text
    assert MetricsLogger(str(tmp_path / "quiet.jsonl"), enabled=False).mark() is None


def test_a_checkpoint_from_before_marks_appends(tmp_path):
    """Resumed without a mark (checkpoints before 2026-12-01): the file goes on as it is."""
    path = tmp_path / "metrics.jsonl"
    first = MetricsLogger(str(path), enabled=True)
    first.log("train", 1, {"loss": 0.5})
    first.close()
    again = MetricsLogger(str(path), enabled=True, resumed=True)
    again.log("train", 2, {"loss": 0.4})
    again.close()
    assert _events(path) == [("train", 1), ("train", 2)]


def test_a_copied_warm_starts_mark_leaves_the_new_runs_file_alone(tmp_path, caplog,
                                                                   monkeypatch):
    """examples/tiny/train.sh copies the warm start's checkpoint into the RL run's folder: its
    mark is of the warm start's metrics.jsonl, and every fresh run warned that the RL run's
    file did not begin with its records, and continued the warm start's wandb run."""
    fake = _FakeWandb()
    monkeypatch.setitem(sys.modules, "wandb", fake)
    warm = MetricsLogger(str(tmp_path / "warm.jsonl"), enabled=True, wandb_project="qarl")
    warm.log("eval", 0, {"eval_reward": 0.1})
    mark = warm.mark()
    warm.close()
    rl = tmp_path / "rl" / "metrics.jsonl"
    with caplog.at_level(logging.INFO):
        logger = MetricsLogger(str(rl), enabled=True, wandb_project="qarl", resume_mark=mark)
    logger.log("train", 1, {"loss": 0.5})
    logger.close()
    assert "moved" not in caplog.text and "this run's records start here" in caplog.text
    assert _events(rl) == [("train", 1)] and "id" not in fake.inits[1]
    # the RL run stopped before its first save; run again from the same copied checkpoint
    with caplog.at_level(logging.INFO):
        MetricsLogger(str(rl), enabled=True, wandb_project="qarl", resume_mark=mark).close()
    assert _events(str(rl) + ".1") == [("train", 1)] and rl.read_bytes() == b""
    assert "id" not in fake.inits[2]


def test_a_moved_run_folder_still_drops_what_followed_its_checkpoint(tmp_path):
    """The mark is of the file's content, not its path: a --save folder moved (or mounted
    elsewhere) between the runs resumes as it would have in place."""
    first = MetricsLogger(str(tmp_path / "a" / "metrics.jsonl"), enabled=True)
    first.log("train", 1, {"loss": 0.5})
    mark = first.mark()
    first.log("train", 2, {"loss": 0.4})
    first.close()
    (tmp_path / "a").rename(tmp_path / "b")
    moved = tmp_path / "b" / "metrics.jsonl"
    MetricsLogger(str(moved), enabled=True, resume_mark=mark).close()
    assert _events(moved) == [("train", 1)]


def test_a_fresh_start_moves_an_earlier_runs_records_aside(tmp_path, caplog):
    """A run that stopped before its first checkpoint left records that the next fresh start
    (the same --save, nothing to resume) appended to: two step 1s in one file."""
    path = tmp_path / "metrics.jsonl"
    for loss in (0.5, 0.4, 0.3):
        with caplog.at_level(logging.WARNING):
            logger = MetricsLogger(str(path), enabled=True)
        logger.log("train", 1, {"loss": loss})
        logger.close()
    assert _events(path) == [("train", 1)]
    assert json.loads((tmp_path / "metrics.jsonl.1").read_text())["loss"] == 0.5
    assert json.loads((tmp_path / "metrics.jsonl.2").read_text())["loss"] == 0.4
    assert "held records of a run that resumed no checkpoint" in caplog.text
    assert str(tmp_path / "metrics.jsonl.2") in caplog.text


class _FakeWandb:
    """The wandb calls MetricsLogger makes (the real package, 0.31 offline, was checked by hand:
    an id and resume="allow" continue that run id in a new local directory)."""

    def __init__(self):
        self.inits, self.logged, self.axes = [], [], {}

    def init(self, **kwargs):
        self.inits.append(kwargs)
        return SimpleNamespace(
            id=kwargs.get("id", f"run{len(self.inits)}"), finish=lambda: None,
            log=lambda values, step: self.logged.append((step, values)),
            define_metric=lambda name, step_metric=None: self.axes.setdefault(name, step_metric))


def test_a_resume_continues_the_checkpoints_wandb_run(tmp_path, monkeypatch):
    fake = _FakeWandb()
    monkeypatch.setitem(sys.modules, "wandb", fake)
    path = str(tmp_path / "metrics.jsonl")
    first = MetricsLogger(path, enabled=True, wandb_project="qarl")
    first.log("train", 1, {"loss": 0.5})
    mark = first.mark()
    first.close()
    assert "id" not in fake.inits[0] and mark["wandb_id"] == "run1"
    MetricsLogger(path, enabled=True, wandb_project="qarl", resume_mark=mark).close()
    assert fake.inits[1]["id"] == "run1" and fake.inits[1]["resume"] == "allow"
    old_mark = {k: v for k, v in mark.items() if k != "wandb_id"}  # a checkpoint from before
    MetricsLogger(path, enabled=True, wandb_project="qarl", resume_mark=old_mark).close()
    assert "id" not in fake.inits[2]


def test_wandb_steps_only_grow_across_the_warm_start_and_rl(tmp_path, monkeypatch):
    """The warm start logged steps 1..sft_iters, then the RL events steps 0, 1, ...: wandb
    ignores a step below its last, so every RL record of a run with a warm start was lost."""
    fake = _FakeWandb()
    monkeypatch.setitem(sys.modules, "wandb", fake)
    logger = MetricsLogger(str(tmp_path / "m.jsonl"), enabled=True, wandb_project="qarl",
                           sft_steps=3)
    for step in (1, 2, 3):
        logger.log("sft", step, {"sft_loss": 1.0 / step})
    logger.log("eval", 0, {"eval_reward": 0.5})
    logger.log("train", 1, {"loss": 0.2})
    logger.log("train", 2, {"loss": 0.1})
    logger.close()
    steps = [step for step, _ in fake.logged]
    assert steps == [1, 2, 3, 3, 4, 5] and steps == sorted(steps)
    assert fake.logged[3][1] == {"eval/eval_reward": 0.5, "eval/step": 0}
    assert fake.logged[5][1] == {"train/loss": 0.1, "train/step": 2}
    assert fake.axes["train/*"] == "train/step" and fake.axes["sft/*"] == "sft/step"


def test_the_console_line_prints_a_nan_metric():
    """A NaN metric (a NaN sampler logprob under a loss that never reads them) was written to
    the jsonl, then crashed the console line's format before the step's checkpoint."""
    import torch

    from megatron_qarl.trainer.metrics import console_line

    line = console_line(3, {"reward_mean": torch.tensor(0.5),
                            "mismatch_abs_log_w_token": float("nan"), "other": 1.0})
    assert line == "step 3: reward_mean=0.5 mismatch_abs_log_w_token=nan"


def test_non_finite_metrics_are_written_as_strict_json(tmp_path):
    """JSON has no NaN or Infinity: json.dumps writes them bare, which strict readers (jq,
    JavaScript) refuse. They are kept visible as strings, tensors as numbers."""
    import torch

    def strict(text):
        raise ValueError(f"{text} is not JSON")

    path = tmp_path / "metrics.jsonl"
    logger = MetricsLogger(str(path), enabled=True)
    logger.log("train", 1, {"nan": float("nan"), "inf": float("-inf"),
                            "tensor": torch.tensor(0.25), "ok": 1.5})
    logger.close()
    record = json.loads(path.read_text(), parse_constant=strict)
    assert (record["nan"], record["inf"], record["tensor"], record["ok"]) == \
        ("nan", "-inf", 0.25, 1.5)
