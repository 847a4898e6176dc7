"""The trainer with `--rollout-engine sglang` against the loopback test double of an SGLang
server: the RL steps train on the server's tokens and logprobs, and every publish reaches the
server as a full update session carrying the step as its weight version. The trainer runs as
a user runs it (a subprocess) with SGLang's CPU-importable modules on its path (conftest.py):
the publish payloads are made with SGLang's own serializer."""
import hashlib
import os
import subprocess
import sys

import pytest
import torch
from sglang_cpu import ensure_sglang_path
from fake_sglang_server import FakeSGLangServer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "trainer"))
from trainer_runs import TINY, records, train  # noqa: E402

from megatron_qarl.rollout.sglang.generation import decode_routed_experts  # noqa: E402

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


def _run_recording_routes(tmp_path, server, *flags):
    """One RL step (no warm start) under record_routing.py: the recorded learner forwards."""
    record = tmp_path / "routes.pt"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore",
           "ROUTING_RECORD": str(record)}
    harness = os.path.join(os.path.dirname(__file__), "record_routing.py")
    proc = subprocess.run(
        [sys.executable, harness, *TINY, "--metrics-path", str(tmp_path / "m.jsonl"),
         "--train-iters", "1",
         "--sft-iters", "0", "--eval-num-prompts", "1", "--rollout-engine", "sglang",
         "--sglang-urls", server.url, *flags],
        capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return torch.load(record)


def _selected(routing_map):
    return [set(row.nonzero().flatten().tolist()) for row in routing_map]


@pytest.mark.parametrize("replay", [True, False])
def test_routing_replay_makes_the_learner_route_like_the_server(tmp_path, sglang_on_path,
                                                                replay):
    server = FakeSGLangServer(version="0.5.23")
    try:
        flags = ["--rollout-routing-replay"] if replay else []
        forwards = _run_recording_routes(tmp_path, server, *flags)
    finally:
        server.kill()
    (body, outs), = [(b, o) for b, o in server.generated
                     if b["sampling_params"]["n"] == 4]  # eval asks n=1
    assert body["return_routed_experts"] is replay
    n = body["sampling_params"]["n"]
    # the server's routes, by the full token sequence they were given for
    server_routes = {}
    for i, prompt in enumerate(body["input_ids"]):
        for j in range(n):
            out = outs[i * n + j]
            tokens = prompt + out["output_ids"]
            server_routes[tuple(tokens)] = decode_routed_experts(
                server.routed_experts(tokens), server.num_layers, server.top_k)
    # 16 samples in micro-batches of 4: old logprobs (4 forwards) + two updates (2 each)
    assert len(forwards) == 8
    replayed = own_differs = 0
    for fwd in forwards:
        batch = fwd["input_ids"].shape[0]
        assert sorted(fwd["layers"]) == [1, 2]
        for layer, (routing_map, own) in fwd["layers"].items():
            used = _selected(routing_map)  # row s * batch + b: token s of sample b
            for b in range(batch):
                length = int(fwd["lengths"][b])
                routes = server_routes[tuple(fwd["input_ids"][b, :length].tolist())]
                for s in range(length - 1):  # the last token was never forwarded by SGLang
                    row = s * batch + b
                    mine = set(own[row].tolist())
                    server_set = set(routes[s, layer - 1].tolist())
                    own_differs += mine != server_set
                    if replay:
                        assert used[row] == server_set, (layer, b, s)
                        replayed += 1
                    else:
                        assert used[row] == mine, (layer, b, s)
    assert own_differs > 0  # the router alone would not have picked the server's experts
    if replay:
        assert replayed == sum(2 * (int(le) - 1) for f in forwards for le in f["lengths"])


def test_an_engine_that_is_not_there_is_an_error_line(tmp_path, sglang_on_path):
    """--sglang-urls of a port nothing listens on: EngineUnavailable reached the user as a
    traceback."""
    import socket

    with socket.socket() as s:  # a free port, closed again
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    run = train("--save", str(tmp_path / "run"), "--sft-iters", "0", "--rollout-engine",
                "sglang", "--sglang-urls", f"http://127.0.0.1:{port}",
                "--rollout-startup-timeout", "2", check=False)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert f"error: http://127.0.0.1:{port}: not healthy after 2s" in run.stderr
