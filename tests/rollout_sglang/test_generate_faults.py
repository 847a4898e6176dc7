"""Generation, routing and faults against FakeSGLangServer (a loopback test double, not
SGLang): sample order and content, retries on another engine when one dies or times out,
a loud failure when none is left, version refusal, routing replay, launch flags."""
import os
from types import SimpleNamespace
import sys
import time

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))
from fake_sglang_server import FakeSGLangServer  # noqa: E402
from tiny_shards import DIMS  # noqa: E402

from megatron_qarl.rollout import SamplingParams  # noqa: E402
from megatron_qarl.rollout.sglang import (EngineRequestError, EngineUnavailable,  # noqa: E402
                                          LaunchSpec, SGLangConfig, SGLangRolloutEngine,
                                          check_server_version, server_command)
from megatron_qarl.rollout.routing_replay import (  # noqa: E402
    UNROUTED, replay_indices, replay_routing, spread_unrouted)
from megatron_qarl.rollout.sglang.pool import DOWN, LOST, UP  # noqa: E402

PROMPTS = [[1, 2, 3], [4, 5], [6], [7, 8, 9, 10]]


def _engine(servers, **kw):
    cfg = SGLangConfig(dims=DIMS, scheme_name="w4a16-g32", urls=[s.url for s in servers],
                       request_timeout_s=kw.pop("timeout", 5.0),
                       backoff_s=kw.pop("backoff_s", 0.01),
                       prompts_per_request=kw.pop("per_request", 1), top_k=2, **kw)
    return SGLangRolloutEngine(cfg)


@pytest.fixture
def servers():
    made = [FakeSGLangServer(), FakeSGLangServer()]
    yield made
    for s in made:
        s.kill()


def test_samples_grouped_per_prompt_with_logprobs_and_routing(servers):
    for s in servers:  # requests overlap, so least-loaded routing must use both engines
        s.delay["/generate"] = 0.3
    engine = _engine(servers, per_request=2, routing_replay=True)
    groups = engine.generate(PROMPTS, SamplingParams(n=3, max_new_tokens=3))
    assert [len(g) for g in groups] == [3] * len(PROMPTS)
    for prompt, group in zip(PROMPTS, groups):
        for j, s in enumerate(group):
            assert s.prompt_ids == prompt
            assert s.response_ids == [(sum(prompt) + j + t) % 97 for t in range(3)]
            assert s.sampler_logprobs == [-0.25, -0.5, -0.75]
            assert s.finish_reason == "length"
            assert s.routed_experts.shape == (len(prompt) + 2, DIMS.num_layers, 2)
    # load was spread: both engines served /generate
    assert all("/generate" in s.calls for s in servers)


def test_deterministic_servers_draw_each_sample_from_its_own_seed(servers):
    """Under --enable-deterministic-inference SGLang seeds an unseeded request with 42 and
    its n copies share it: every group was n copies of one response (a review). With a seed
    (--deterministic-mode passes --seed) each sample is its own request and seed: the n
    differ, and a second engine of the same seed draws the same ones."""
    for s in servers:
        s.deterministic = True
    params = SamplingParams(n=3, max_new_tokens=3)
    unseeded = _engine(servers, per_request=2).generate(PROMPTS, params)
    assert all(len({tuple(s.response_ids) for s in g}) == 1 for g in unseeded)
    seeded = [_engine(servers, per_request=2, seed=7).generate(PROMPTS, params)
              for _ in range(2)]
    body = servers[0].generated[-1][0]
    assert len(body["input_ids"]) == 2 * 3 and all(sp["n"] == 1 for sp in body["sampling_params"])
    assert len({sp["sampling_seed"] for sp in body["sampling_params"]}) == 6
    # the fake's draw is the seed mod 97, so two of a group's three may meet by chance
    assert sum(len({tuple(s.response_ids) for s in g}) > 1 for g in seeded[0]) == len(PROMPTS)
    assert [[s.response_ids for s in g] for g in seeded[0]] == \
           [[s.response_ids for s in g] for g in seeded[1]]


def test_engine_dying_mid_generation_is_retried_elsewhere(servers):
    servers[0].die_on["/generate"] = 1
    engine = _engine(servers, per_request=len(PROMPTS))  # one request, first to engine 0
    groups = engine.generate(PROMPTS, SamplingParams(n=2))
    assert [len(g) for g in groups] == [2] * 4
    assert {s.meta["engine"] for g in groups for s in g} == {servers[1].url}
    assert engine.pool.slots[0].state == DOWN


def test_timeout_retries_elsewhere_and_keeps_a_healthy_engine(servers):
    """A /generate past its timeout goes to the other engine; the slow one, answering its
    health check, stays in rotation (it was marked down, out until the next publish)."""
    servers[0].delay["/generate"] = 2.0
    engine = _engine(servers, timeout=0.5, per_request=4)  # one request, first to engine 0
    groups = engine.generate(PROMPTS, SamplingParams())
    assert servers[0].calls.count("/generate") == 1
    assert {s.meta["engine"] for g in groups for s in g} == {servers[1].url}
    assert [s.state for s in engine.pool.slots] == [UP, UP]


def test_timeout_of_an_engine_failing_its_health_check_takes_it_out(servers):
    servers[0].delay["/generate"] = 2.0
    engine = _engine(servers, timeout=0.5, per_request=4)
    servers[0].reject.add("/health")
    groups = engine.generate(PROMPTS, SamplingParams())
    assert {s.meta["engine"] for g in groups for s in g} == {servers[1].url}
    assert [s.state for s in engine.pool.slots] == [DOWN, UP]


def test_all_engines_dead_fails_loudly(servers):
    engine = _engine(servers, retries=2)
    for s in servers:
        s.kill()
    with pytest.raises(EngineUnavailable, match="no SGLang engine in rotation|failed"):
        engine.generate(PROMPTS, SamplingParams())


def test_aborted_samples_are_generated_again_not_trained_on(servers):
    """A /generate answered with aborted samples (the server paused or drained them) is sent
    again; when every attempt is aborted the rollout fails, naming the aborts."""
    servers[0].abort_generates = 1  # its first answer only
    engine = _engine(servers, per_request=4)
    groups = engine.generate(PROMPTS, SamplingParams())
    assert all(g[0].finish_reason == "length" for g in groups)
    # sent again to the other engine (engine 0 would answer a second time)
    assert [s.calls.count("/generate") for s in servers] == [1, 1]
    assert {s.meta["engine"] for g in groups for s in g} == {servers[1].url}
    servers[0].abort_generates = servers[1].abort_generates = 10
    with pytest.raises(EngineUnavailable, match="samples aborted"):
        _engine(servers, per_request=4, retries=1).generate(PROMPTS, SamplingParams())


def test_bad_request_is_not_retried(servers):
    servers[0].reject.add("/generate")
    servers[1].reject.add("/generate")
    engine = _engine(servers)
    with pytest.raises(EngineRequestError, match="injected rejection"):
        engine.generate(PROMPTS[:1], SamplingParams())
    assert sum(s.calls.count("/generate") for s in servers) == 1


def test_w4a16_refused_on_old_sglang():
    with pytest.raises(EngineRequestError, match="0.5.21.*14158|14158"):
        check_server_version("0.5.20", "w4a16-g128", "http://x")
    with pytest.raises(EngineRequestError, match="begin/end_weight_update"):
        check_server_version("0.5.4", "none", "http://x")
    check_server_version("0.5.23", "w4a16-g128", "http://x")
    old = FakeSGLangServer(version="0.5.19")
    try:
        with pytest.raises(EngineRequestError, match="W4A16"):
            _engine([old])
    finally:
        old.kill()


def test_the_sglang_extra_installs_the_versions_the_bridge_accepts():
    """setup.py's [sglang] pin and the bridge's version check name one range (the extra took
    any version >= 0.5.21, 0.6 included, which the bridge refuses)."""
    from megatron_qarl.rollout.sglang.version import SUPPORTED_RANGE

    setup_py = os.path.join(os.path.dirname(__file__), "..", "..", "setup.py")
    with open(setup_py) as f:
        assert f'"sglang": ["sglang{SUPPORTED_RANGE}"]' in f.read()


def test_a_server_splitting_experts_across_w4a16_groups_is_refused():
    """DIMS.ffn 64 over TP 4 / EP 1 leaves 16 columns a rank, half a 32-wide group."""
    bad, good = FakeSGLangServer(tp_size=4, ep_size=1), FakeSGLangServer(tp_size=4, ep_size=4)
    try:
        with pytest.raises(ValueError, match=rf"{bad.url}: .* 16 each.*larger --ep-size"):
            _engine([good, bad])
        assert _engine([good]).pool.slots[0].tp_size == 4
    finally:
        bad.kill()
        good.kill()


def test_generate_refused_while_weights_released(servers):
    engine = _engine(servers, colocated=True)
    engine.release_memory()
    assert all("/release_memory_occupation" in s.calls for s in servers)
    with pytest.raises(Exception, match="publish_weights"):
        engine.generate(PROMPTS, SamplingParams())


def test_servers_on_their_own_gpus_keep_their_memory(servers):
    engine = _engine(servers)
    engine.release_memory()
    engine.resume_memory()
    assert not any("_memory_occupation" in c for s in servers for c in s.calls)


def test_launched_servers_are_stopped_when_the_set_up_fails(monkeypatch, tmp_path):
    """Servers that never become healthy (here processes that only sleep) fail the engine's
    set-up and are stopped with it: they kept their GPUs after the trainer had exited."""
    from megatron_qarl.rollout.sglang import engine as engine_module
    from megatron_qarl.rollout.sglang import launcher

    monkeypatch.setattr(launcher, "server_command",
                        lambda spec, e: [sys.executable, "-c", "import time; time.sleep(120)"])
    launched = []
    start = launcher.ServerProcess.start
    monkeypatch.setattr(engine_module.ServerProcess, "start",
                        lambda self: launched.append(self) or start(self))
    spec = LaunchSpec(model_path="/m", num_engines=2, port=39211)
    cfg = SGLangConfig(dims=DIMS, scheme_name="w4a16-g32", launch=spec, startup_timeout_s=1.0,
                       log_dir=str(tmp_path))
    with pytest.raises(Exception, match="39211"):
        SGLangRolloutEngine(cfg)
    assert len(launched) == 2 and not any(s.alive() for s in launched)


def test_a_taken_port_is_named_before_a_server_starts(tmp_path):
    """SGLang binds its HTTP port after loading the model: /health was answered by the server
    an earlier run left on it, and generation went there."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        spec = LaunchSpec(model_path="/m", port=port)
        cfg = SGLangConfig(dims=DIMS, scheme_name="w4a16-g32", launch=spec,
                           startup_timeout_s=1.0, log_dir=str(tmp_path))
        with pytest.raises(OSError, match=f"127.0.0.1:{port} is taken.*--sglang-port"):
            SGLangRolloutEngine(cfg)


def test_a_launched_server_stops_with_the_trainer(tmp_path):
    """Servers were started without a parent-death signal: a trainer killed outright left
    them running (reparented to init) with their GPUs."""
    import signal
    import subprocess

    code = ("import sys, time\n"
            "sys.path.insert(0, sys.argv[1])\n"
            "from megatron_qarl.rollout.sglang import launcher\n"
            "launcher.server_command = lambda spec, e: [sys.executable, '-c', "
            "'import time; time.sleep(120)']\n"
            "server = launcher.ServerProcess(launcher.LaunchSpec(model_path='/m', port=0), 0, "
            "sys.argv[2])\n"
            "server.start()\n"
            "print(server.proc.pid, flush=True)\n"
            "time.sleep(120)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    trainer = subprocess.Popen([sys.executable, "-c", code, root, str(tmp_path)],
                               stdout=subprocess.PIPE, text=True)
    server_pid = int(trainer.stdout.readline())
    assert _running(server_pid)
    trainer.send_signal(signal.SIGKILL)
    trainer.wait()
    for _ in range(100):
        if not _running(server_pid):
            break
        time.sleep(0.05)
    else:
        os.kill(server_pid, signal.SIGKILL)
        raise AssertionError("the server outlived its killed parent")


def _running(pid: int) -> bool:
    """Neither gone nor a zombie (an orphan's init may not reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_launch_flags():
    spec = LaunchSpec(model_path="/m", num_engines=2, tp_size=4, ep_size=4, base_gpu_id=0,
                      routed_experts=True)
    cmd = server_command(spec, 1)
    flag = {cmd[i]: cmd[i + 1] for i in range(len(cmd) - 1) if cmd[i].startswith("--")}
    assert flag["--base-gpu-id"] == "4" and flag["--port"] == "30001"
    assert flag["--tp-size"] == "4" and flag["--ep-size"] == "4" and flag["--dp-size"] == "1"
    assert "--enable-memory-saver" in cmd and "--enable-return-routed-experts" in cmd
    with pytest.raises(ValueError, match="--sglang-ep-size"):
        LaunchSpec(model_path="/m", tp_size=2, ep_size=4)


def test_routing_replay_feeds_megatron_router_replay(servers):
    from megatron.core.transformer.moe.router_replay import RouterReplay

    engine = _engine(servers, routing_replay=True)
    samples = [g[0] for g in engine.generate(PROMPTS[:2], SamplingParams())]
    per_layer = replay_indices(samples, seq_len=8, num_experts=4)  # the fake server's
    assert len(per_layer) == DIMS.num_layers and per_layer[0].shape == (16, 2)
    # row s * batch + b holds sample b's token s
    assert torch.equal(per_layer[1][1 * 2 + 0], samples[0].routed_experts[1, 1].long())
    model = torch.nn.ModuleList(torch.nn.Module() for _ in range(DIMS.num_layers))
    for layer in model:
        layer.router_replay = RouterReplay()
        layer.config = SimpleNamespace(num_moe_experts=4)
    with replay_routing(model, per_layer):
        _, idx = model[0].router_replay.get_replay_topk(torch.randn(16, 4), 2)
        assert torch.equal(idx, spread_unrouted(per_layer[0], 4))
        assert torch.equal(idx[per_layer[0] != UNROUTED], per_layer[0][per_layer[0] != UNROUTED])
    assert model[0].router_replay.router_replay_action is None
    with pytest.raises(ValueError, match="routes for 1 MoE layers, the model has"):
        with replay_routing(model, per_layer[:1]):
            pass


def test_a_server_dying_mid_answer_is_unavailable_not_a_crash():
    """An answer cut short (its Content-Length not reached: http.client's IncompleteRead)
    escaped the bridge's error handling and failed the rollout on every rank (a review):
    now the engine is unavailable, so the chunk is retried on another."""
    import socket
    import threading

    from megatron_qarl.rollout.sglang.http_client import EngineClient

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def answer_half():
        conn, _ = listener.accept()
        request = b""
        while b"\r\n\r\n" not in request:  # the whole request first: unread bytes reset
            request += conn.recv(65536)
        head, body = request.split(b"\r\n\r\n", 1)
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        while len(body) < length:
            body += conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 1000\r\n\r\n[{\"text\": ")
        conn.close()

    threading.Thread(target=answer_half, daemon=True).start()
    client = EngineClient(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout_s=5.0)
    with pytest.raises(EngineUnavailable, match="IncompleteRead"):
        client.post("/generate", {"input_ids": [[1]]}, retries=0)
    listener.close()


def test_truncated_prompts_and_samples_across_updates_are_not_trained_on():
    """A server started with --allow-auto-truncate cuts prompts silently (meta prompt_tokens
    says so); a sample whose tokens span two weight versions carries only the last in
    weight_version (its weight_versions spans tell)."""
    from megatron_qarl.rollout.sglang.generation import parse_generate_response

    def answer(**meta):
        return [{"output_ids": [5, 6], "meta_info": {
            "output_token_logprobs": [[-0.1, 5, None], [-0.2, 6, None]],
            "finish_reason": {"type": "length", "length": 2}, "weight_version": "3", **meta}}]

    ok = parse_generate_response(answer(prompt_tokens=3, weight_versions=[
        {"version": "3", "start": 0, "end": 2}]), [[1, 2, 3]], 1, "u")
    assert ok[0][0].weight_version == 3
    with pytest.raises(EngineRequestError, match="read 2 of the prompt's 3 tokens"):
        parse_generate_response(answer(prompt_tokens=2), [[1, 2, 3]], 1, "u")
    straddled = parse_generate_response(answer(weight_versions=[["2", 0, 1], ["3", 1, 2]]),
                                        [[1, 2, 3]], 1, "u")
    assert straddled[0][0].weight_version == -1  # stale: the engine's check refuses it


def test_server_settings_this_run_needs_are_checked_at_connect(servers):
    for s in servers:
        s.server_args = {"enable_return_routed_experts": False}
    with pytest.raises(EngineRequestError, match="restart the server with "
                                                 "--enable-return-routed-experts"):
        _engine(servers, routing_replay=True)
    for s in servers:
        s.server_args = {"enable_return_routed_experts": True, "enable_eplb": True,
                         "enable_deterministic_inference": False}
    with pytest.raises(EngineRequestError, match="no EPLB or redundant experts.*"
                                                 "--enable-deterministic-inference"):
        _engine(servers, routing_replay=True, seed=1)
    for s in servers:
        s.server_args = {"enable_return_routed_experts": True, "enable_eplb": False,
                         "ep_num_redundant_experts": 0, "enable_deterministic_inference": True}
    _engine(servers, routing_replay=True, seed=1)
    for s in servers:  # a colocated server whose release would free nothing
        s.server_args = {"enable_memory_saver": False}
    with pytest.raises(EngineRequestError, match="--enable-memory-saver .for --sglang-colocated"):
        _engine(servers, colocated=True)
    _engine(servers)  # on GPUs of its own it keeps its memory anyway


def test_memory_calls_are_not_repeated_and_generate_backs_off_capped(servers, monkeypatch):
    """A release that timed out was sent three more times (SGLang re-exports the released
    weights' buffers on a second release and fails a second resume); /generate's backoff
    doubled without the policy's cap and slept once more after its last try."""
    from megatron_qarl.rollout.sglang import engine as engine_module

    servers[1].delay["/release_memory_occupation"] = 1.0
    engine = _engine(servers, colocated=True, control_timeout_s=0.2)
    engine.release_memory()
    assert servers[1].calls.count("/release_memory_occupation") == 1
    # its release may have run part-way: out until restarted, though it answers /health (a
    # down engine was re-admitted, and published to with its weights' memory released)
    assert [s.state for s in engine.pool.slots] == [UP, LOST]
    engine.pool.mark(engine.pool.slots[0], DOWN, "a generate call failed")
    servers[0].reject.add("/health")
    with pytest.raises(EngineUnavailable, match="lost: .*restart the server"):
        engine.pool.acquire()  # the lost one answers its health check, and stays out
    servers[0].reject.clear()
    assert engine.pool.acquire() is engine.pool.slots[0]  # a down one that answers comes back
    engine = _engine(servers, retries=7, backoff_s=8.0)
    servers[0].abort_generates = servers[1].abort_generates = 10
    slept = []
    monkeypatch.setattr(engine_module.time, "sleep", slept.append)
    with pytest.raises(EngineUnavailable, match="/generate failed 8 times"):
        engine.generate(PROMPTS[:1], SamplingParams())
    slept = [s for s in slept if s]  # (time.sleep is patched for the fake servers too)
    assert slept == [8.0, 16.0, 30.0, 30.0, 30.0, 30.0, 30.0]  # none after the last try
