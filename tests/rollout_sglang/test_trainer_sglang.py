"""The trainer with `--rollout-engine sglang` against the loopback test double of an SGLang
server: the RL steps train on the server's tokens and logprobs, and every publish reaches the
server as a full update session carrying the step as its weight version. The trainer runs as
a user runs it (a subprocess) with SGLang's CPU-importable modules on its path (conftest.py):
the publish payloads are made with SGLang's own serializer."""
import hashlib
import os
import sys

import pytest
from sglang_cpu import ensure_sglang_path
from fake_sglang_server import FakeSGLangServer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "trainer"))
from trainer_runs import records, train  # noqa: E402

SESSION = ["/pause_generation", "/flush_cache", "/begin_weight_update",
           "/update_weights_from_tensor", "/end_weight_update", "/update_weight_version",
           "/continue_generation"]


@pytest.fixture
def sglang_on_path(monkeypatch):
    path = os.pathsep.join(p for p in (ensure_sglang_path(), os.environ.get("PYTHONPATH")) if p)
    monkeypatch.setenv("PYTHONPATH", path)


def _sessions(calls):
    """The publish sessions in the server's call log, as lists of distinct steps."""
    sessions, current = [], None
    for path in calls:
        if path == "/pause_generation":
            current = []
        if current is not None and (not current or current[-1] != path):
            current.append(path)
        if path == "/continue_generation":
            sessions.append(current)
            current = None
    return sessions


def test_rl_steps_train_on_the_servers_samples_and_publish_each_version(tmp_path,
                                                                         sglang_on_path):
    server = FakeSGLangServer(version="0.5.23")
    try:
        save = tmp_path / "run"
        train("--save", str(save), "--train-iters", "2", "--sft-iters", "0",
              "--eval-num-prompts", "4", "--rollout-engine", "sglang",
              "--sglang-urls", server.url, "--sglang-colocated",
              "--rollout-update-bucket-mb", "0.05")
    finally:
        server.kill()
    steps = records(save / "metrics.jsonl")
    assert [r["step"] for r in steps] == [1, 2]
    train_answers = [(body, outs) for body, outs in server.generated
                     if body["sampling_params"]["n"] == 4]  # eval asks n=1
    assert len(train_answers) == 2
    for record, (body, outs) in zip(steps, train_answers):
        n = body["sampling_params"]["n"]
        expected = [(prompt, outs[i * n + j]["output_ids"])
                    for i, prompt in enumerate(body["input_ids"]) for j in range(n)]
        assert record["rollout_sha1"] == hashlib.sha1(repr(expected).encode()).hexdigest()
        # the double answers logprobs -0.25, -0.5, -0.75 for its three tokens
        assert record["sampler_logprob_mean"] == pytest.approx(-0.5)
        assert record["response_length_mean"] == 3.0
    # publishes: v0 at start-up, then one per step; each a complete session
    sessions = _sessions(server.calls)
    assert sessions == [SESSION] * 3
    assert server.calls.count("/update_weights_from_tensor") > 3  # several buckets each
    assert server.version_updates == ["0", "1", "2"]
    # colocated: each step frees the servers' memory after its rollout and takes the weights
    # back before publishing; the KV cache returns at the next rollout (or evaluation)
    memory = [c.split("_")[0] for c in server.calls
              if c in ("/release_memory_occupation", "/resume_memory_occupation",
                       "/pause_generation")]
    assert memory == ["/pause",
                      "/release", "/resume", "/pause",
                      "/resume", "/release", "/resume", "/pause",
                      "/resume"]
