"""Details of the SGLang bridge's contract that the fault tests left open, against
FakeSGLangServer (a loopback test double, not SGLang) and stub transports: the launch command
of each engine, start-up of a server that exits, HTTP statuses and bodies, the pool's
in-flight counts, per-sample seeds, the update session's request bodies, memory calls on
engines out of rotation, the request and answer formats, and the version floor."""
import os
import sys
import time

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))
from fake_sglang_server import FakeSGLangServer  # noqa: E402
from tiny_shards import DIMS  # noqa: E402

from megatron_qarl.rollout import SamplingParams  # noqa: E402
from megatron_qarl.rollout.publish import ParallelGroups, plan_buckets  # noqa: E402
from megatron_qarl.rollout.sglang import (EngineRequestError, EngineUnavailable,  # noqa: E402
                                          LaunchSpec, PublishError, SGLangConfig,
                                          SGLangError, SGLangRolloutEngine,
                                          check_server_version, server_command)
from megatron_qarl.rollout.sglang.generation import (generate_request,  # noqa: E402
                                                     parse_generate_response, sample_seeds)
from megatron_qarl.rollout.sglang.http_client import EngineClient, RetryPolicy  # noqa: E402
from megatron_qarl.rollout.sglang.pool import LOST, STALE, UP, EngineSlot  # noqa: E402
from megatron_qarl.rollout.sglang.session import UpdateSession  # noqa: E402

PROMPTS = [[1, 2, 3], [4, 5], [6], [7, 8, 9, 10]]


def _engine(servers, **kw):
    cfg = SGLangConfig(dims=DIMS, scheme_name="w4a16-g32", urls=[s.url for s in servers],
                       request_timeout_s=5.0, backoff_s=0.01,
                       prompts_per_request=kw.pop("per_request", 1), top_k=2, **kw)
    return SGLangRolloutEngine(cfg)


class RecordingServer(FakeSGLangServer):
    """Also keeps every request body, and answers a few extra routes."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.bodies = []
        self.fail_next = 0  # answer this many /flaky calls with HTTP 500

    def handle(self, path, body):
        self.bodies.append((path, body))
        return super().handle(path, body)

    def _flaky(self, _):
        if self.fail_next:
            self.fail_next -= 1
            return 500, {"detail": "internal error"}
        return 200, {"ok": True}

    def _refuse(self, _):  # a server refusing in the body of a 200 answer
        return 200, {"success": False, "message": "not enough memory"}

    def _get_server_info(self, body):  # the route's name before the /server_info rename
        return self._server_info(body)


@pytest.fixture
def servers():
    made = [RecordingServer(), RecordingServer()]
    yield made
    for s in made:
        s.kill()


def _flags(cmd):
    return {cmd[i]: cmd[i + 1] for i in range(len(cmd) - 1) if cmd[i].startswith("--")}


def test_launched_engines_start_after_the_base_gpu_with_the_modes_asked():
    spec = LaunchSpec(model_path="/m", num_engines=3, tp_size=2, base_gpu_id=2,
                      colocated=False, deterministic=True, port=31000)
    cmd = server_command(spec, 2)
    assert _flags(cmd)["--base-gpu-id"] == "6" and _flags(cmd)["--port"] == "31002"
    assert "--enable-deterministic-inference" in cmd
    assert "--enable-memory-saver" not in cmd  # GPUs of its own: nothing to release
    plain = server_command(LaunchSpec(model_path="/m"), 0)
    assert "--enable-deterministic-inference" not in plain and "--enable-memory-saver" in plain
    with pytest.raises(ValueError, match="--sglang-num-engines must be >= 1"):
        LaunchSpec(model_path="/m", num_engines=0)
    with pytest.raises(ValueError, match="--sglang-mem-fraction-static"):
        LaunchSpec(model_path="/m", mem_fraction_static=1.0)


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_server_exiting_during_start_up_is_reported_at_once(monkeypatch, tmp_path):
    """A server that dies while loading (a bad --model-path) is named as exited with its log,
    without waiting out --rollout-startup-timeout."""
    from megatron_qarl.rollout.sglang import launcher

    monkeypatch.setattr(launcher, "server_command",
                        lambda spec, e: [sys.executable, "-c", "raise SystemExit(3)"])
    server = launcher.ServerProcess(LaunchSpec(model_path="/m", port=_free_port()), 0,
                                    str(tmp_path))
    server.start()
    start = time.monotonic()
    with pytest.raises(EngineUnavailable, match="exited during start-up; server log: .*"
                                                "sglang_engine0.log"):
        server.wait_healthy(EngineClient(server.spec.url(0)), timeout_s=8.0)
    assert time.monotonic() - start < 6.0


def test_health_answered_for_a_dead_launched_server_is_not_trusted(tmp_path):
    """Another process answering /health on the port of a launched server that has exited
    meanwhile is not that server."""
    from megatron_qarl.rollout.sglang.launcher import ServerProcess

    other = FakeSGLangServer()
    try:
        server = ServerProcess(LaunchSpec(model_path="/m"), 0, str(tmp_path))
        answers = iter([True, False])  # alive while waiting, gone once /health answered
        server.alive = lambda: next(answers, False)
        with pytest.raises(EngineUnavailable, match="exited during start-up"):
            server.wait_healthy(EngineClient(other.url), timeout_s=5.0)
    finally:
        other.kill()


def test_5xx_is_retried_and_a_refusal_in_a_200_body_is_not(servers):
    server = servers[0]
    client = EngineClient(server.url, 5.0, RetryPolicy(retries=2, backoff_s=0.01))
    server.fail_next = 2
    assert client.post("/flaky") == {"ok": True}
    assert server.calls.count("/flaky") == 3
    server.fail_next = 5
    with pytest.raises(EngineUnavailable, match="HTTP 500.*after 2 retries"):
        client.post("/flaky")
    assert server.calls.count("/flaky") == 6
    with pytest.raises(EngineRequestError, match="/refuse: not enough memory"):
        client.post("/refuse")
    assert server.calls.count("/refuse") == 1


def test_urls_with_a_trailing_slash_reach_the_routes(servers):
    engine = SGLangRolloutEngine(SGLangConfig(dims=DIMS, scheme_name="w4a16-g32",
                                              urls=[servers[0].url + "/"], top_k=2))
    assert engine.pool.slots[0].url == servers[0].url
    engine.generate(PROMPTS[:1], SamplingParams())
    assert servers[0].calls == ["/health", "/server_info", "/generate"]


def test_a_server_without_the_renamed_server_info_route(servers):
    servers[0].reject.add("/server_info")
    engine = _engine(servers[:1])
    assert engine.pool.slots[0].info["version"] == "0.5.23"
    assert "/get_server_info" in servers[0].calls


def test_a_data_parallel_server_is_refused(servers):
    servers[1].server_args = {"dp_size": 2}
    with pytest.raises(EngineRequestError, match=f"{servers[1].url}: dp_size 2.*one server "
                                                 f"per data-parallel replica"):
        _engine(servers)


def test_requests_in_flight_are_counted_back(servers):
    """Least-loaded routing reads the in-flight counts: each request is counted back when it
    returns, answered, aborted or failed."""
    engine = _engine(servers, per_request=1)
    engine.generate(PROMPTS, SamplingParams(n=2))
    assert [s.inflight for s in engine.pool.slots] == [0, 0]
    servers[0].abort_generates = servers[1].abort_generates = 10
    engine = _engine(servers, retries=1)
    with pytest.raises(EngineUnavailable, match="samples aborted"):
        engine.generate(PROMPTS[:1], SamplingParams())
    assert [s.inflight for s in engine.pool.slots] == [0, 0]


def _seeds_sent(servers):
    return [sp["sampling_seed"] for s in servers for body, _ in s.generated
            for sp in body["sampling_params"]]


def test_every_sample_of_a_call_has_its_own_seed_and_each_version_new_ones(servers):
    """The seeds of one generate call, over all its /generate requests (chunks), are those of
    the call's prompts by their place in the call; weights of another version draw anew."""
    params = SamplingParams(n=2, max_new_tokens=3)
    engine = _engine(servers, per_request=2, seed=7)
    engine.generate(PROMPTS, params)
    first = _seeds_sent(servers)
    assert len(first) == len(set(first)) == len(PROMPTS) * 2
    assert sorted(first) == sorted(sample_seeds(7, 0, 0, len(PROMPTS), 2))
    for s in servers:
        s.generated.clear()
    engine.weight_version = 1  # as a publish of v1 leaves it
    engine.generate(PROMPTS, params)
    again = _seeds_sent(servers)
    assert sorted(again) == sorted(sample_seeds(7, 1, 0, len(PROMPTS), 2))
    assert not set(again) & set(first)


def test_a_rank_other_than_the_driver_takes_the_version(monkeypatch):
    from megatron_qarl.rollout.sglang import engine as engine_module

    monkeypatch.setattr(engine_module, "_is_driver", lambda: False)
    cfg = SGLangConfig(dims=DIMS, scheme_name="w4a16-g32", urls=["http://127.0.0.1:9"])
    engine = SGLangRolloutEngine(cfg, groups=lambda: ParallelGroups(None, None, None, False,
                                                                    True),
                                 params=lambda model: [])
    assert engine.pool is None
    engine.publish_weights(model=None, version=4)
    assert engine.weight_version == 4
    with pytest.raises(SGLangError, match="runs on the driver"):
        engine.generate(PROMPTS, SamplingParams())


def test_memory_calls_skip_engines_out_of_rotation(servers):
    """A stale engine (paused, not released) and a lost one (memory in an unknown state) are
    neither released nor resumed: only the engines the next publish resumes were released."""
    servers.append(RecordingServer())
    engine = _engine(servers, colocated=True)
    engine.pool.mark(engine.pool.slots[1], STALE, "failed publish of v1")
    engine.pool.mark(engine.pool.slots[2], LOST, "a failed release")
    engine.release_memory()
    engine.resume_memory()
    memory = [[c for c in s.calls if c.endswith("_memory_occupation")] for s in servers]
    assert memory == [["/release_memory_occupation", "/resume_memory_occupation"], [], []]


class StubTransport:
    def __init__(self, fail_open=None):
        self.fail_open, self.opened, self.sent = fail_open, [], []

    def open(self, slots):
        self.opened.append([s.url for s in slots])
        if self.fail_open is not None:
            raise self.fail_open

    def send(self, bucket, slots, on_error):
        self.sent.append((bucket, [s.url for s in slots]))

    def close(self, slots):
        pass


def _slots(servers):
    return [EngineSlot(EngineClient(s.url, 5.0)) for s in servers]


def test_update_session_bodies(servers):
    """What each step of a publish asks of the server: the configured pause mode, and a
    version update that aborts nothing (in-place paused requests continue after it)."""
    transport = StubTransport()
    slots = _slots(servers)
    live = UpdateSession(slots, transport, 5, "retract", 5.0).run(["bucket0", "bucket1"])
    assert live == slots and [s.state for s in slots] == [UP, UP]
    assert [b for b, _ in transport.sent] == ["bucket0", "bucket1"]
    for s in servers:
        assert s.bodies == [("/pause_generation", {"mode": "retract"}),
                            ("/flush_cache", {}),
                            ("/begin_weight_update", {"selector": "all"}),
                            ("/end_weight_update", {}),
                            ("/update_weight_version", {"new_version": "5",
                                                        "abort_all_requests": False}),
                            ("/continue_generation", {})]
    assert [s.weight_version for s in slots] == [5, 5]


def test_a_transport_that_cannot_open_fails_the_publish(servers):
    """A broadcast group that cannot be built fails every engine: nothing is sent, each
    one's weight-update session is ended and it stays paused, out of rotation."""
    transport = StubTransport(fail_open=RuntimeError("group init refused"))
    slots = _slots(servers)
    with pytest.raises(PublishError, match="no engine took weights v2.*group init refused"):
        UpdateSession(slots, transport, 2, "abort", 5.0).run(["bucket0"])
    assert transport.sent == [] and [s.state for s in slots] == [STALE, STALE]
    for s in servers:
        assert s.calls[-1] == "/end_weight_update" and not s.in_update
        assert s.paused and "/continue_generation" not in s.calls


class NcclServer(RecordingServer):
    def _init_weights_update_group(self, _):
        return 200, {"success": True, "message": ""}

    def _destroy_weights_update_group(self, _):
        return 200, {"success": True, "message": ""}


def test_nccl_group_is_built_once_and_rebuilt_when_the_engines_change(monkeypatch):
    """The broadcast group (SGLang's init_custom_process_group, stubbed) is kept while the
    same engines publish, and rebuilt without one that dropped out: the ranks of the group
    follow the engines' TP sizes after the sender's rank 0."""
    import types

    import torch.distributed as dist

    from megatron_qarl.rollout.sglang.transfer import GROUP_NAME, NcclTransport

    made, destroyed = [], []
    utils = types.ModuleType("sglang.srt.utils")
    utils.init_custom_process_group = lambda **kw: made.append(kw) or f"group{len(made)}"
    for name in ("sglang", "sglang.srt"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "sglang.srt.utils", utils)
    monkeypatch.setattr(dist, "destroy_process_group", destroyed.append)
    servers = [NcclServer(tp_size=2), NcclServer(), NcclServer()]
    try:
        slots = [EngineSlot(EngineClient(s.url, 5.0), tp_size=s.tp_size) for s in servers]
        transport = NcclTransport("127.0.0.1", 29999, timeout_s=5.0)
        transport.open(slots)
        transport.open(slots)
        assert [(kw["world_size"], kw["rank"]) for kw in made] == [(5, 0)]
        joins = [[b for p, b in s.bodies if p == "/init_weights_update_group"] for s in servers]
        assert [[(b["rank_offset"], b["world_size"]) for b in j] for j in joins] == \
            [[(1, 5)], [(3, 5)], [(4, 5)]]
        assert joins[0][0]["group_name"] == GROUP_NAME
        transport.open([slots[0], slots[2]])  # engine 1 failed a bucket
        assert destroyed == ["group1"] and [kw["world_size"] for kw in made] == [5, 4]
        assert [s.calls.count("/destroy_weights_update_group") for s in servers] == [1, 0, 1]
        assert [b["rank_offset"] for p, b in servers[2].bodies
                if p == "/init_weights_update_group"] == [4, 3]
        transport.close([slots[0], slots[2]])
        assert destroyed == ["group1", "group2"] and transport.group is None
    finally:
        for s in servers:
            s.kill()


def test_a_lost_engine_stays_out_of_publishes(servers):
    """An engine whose memory release failed part-way (lost) is left out of every publish and
    stays lost: a publish must not turn it stale, which the next publish would update and put
    back in rotation with its memory in an unknown state."""
    cfg = SGLangConfig(dims=DIMS, scheme_name="w4a16-g32", urls=[s.url for s in servers],
                       top_k=2, colocated=True)
    engine = SGLangRolloutEngine(cfg, groups=lambda: ParallelGroups(None, None, None, True,
                                                                    True),
                                 params=lambda model: [])
    engine.transport = StubTransport()
    engine.pool.mark(engine.pool.slots[1], LOST, "/release_memory_occupation: timed out")
    for version in (1, 2):
        engine.publish_weights(model=None, version=version)
        assert [s.state for s in engine.pool.slots] == [UP, LOST]
    assert "/pause_generation" not in servers[1].calls
    assert servers[0].version_updates == ["1", "2"]


def test_distributed_update_body_does_not_flush():
    from megatron_qarl.rollout.sglang.payload import distributed_update_body

    bucket, = plan_buckets([("a.weight", torch.zeros(2, 3, dtype=torch.bfloat16)),
                            ("b.weight", torch.zeros(4))], 1 << 20)
    body = distributed_update_body(bucket, "g")
    assert body["flush_cache"] is False and body["load_format"] == "flattened_bucket"
    assert body["group_name"] == "g"
    assert sorted(zip(body["names"], body["dtypes"], map(tuple, body["shapes"]))) == \
        [("a.weight", "bfloat16", (2, 3)), ("b.weight", "float32", (4,))]


def test_generate_request_asks_for_logprobs_and_the_stop_tokens():
    params = SamplingParams(temperature=0.7, top_p=0.9, top_k=20, max_new_tokens=5,
                            stop_token_ids=(2, 3), n=2)
    body = generate_request([[1, 2]], params, return_routed_experts=True)
    assert body["return_logprob"] is True and body["logprob_start_len"] == -1
    assert body["return_routed_experts"] is True and body["input_ids"] == [[1, 2]]
    assert body["sampling_params"] == {"max_new_tokens": 5, "temperature": 0.7, "top_p": 0.9,
                                       "top_k": 20, "stop_token_ids": [2, 3], "n": 2,
                                       "skip_special_tokens": False}


def _answer(**meta):
    return [{"output_ids": [5, 6], "meta_info": {
        "output_token_logprobs": [[-0.1, 5, None], [-0.2, 6, None]], **meta}}]


def test_answers_without_a_known_finish_reason_or_with_foreign_routes():
    """No finish_reason is a sample cut short (not trained on); an unknown one, or routed
    experts of another shape than the learner's, is a server this bridge cannot read."""
    sample, = parse_generate_response(_answer(), [[1]], 1, "u")[0]
    assert sample.finish_reason == "abort"
    with pytest.raises(EngineRequestError, match="unknown finish_reason 'eos'"):
        parse_generate_response(_answer(finish_reason={"type": "eos"}), [[1]], 1, "u")
    import base64

    import numpy as np

    routes = base64.b64encode(np.zeros(2 * 2 * 3, dtype=np.int32).tobytes()).decode()
    finished = {"finish_reason": {"type": "length"}, "routed_experts": routes}
    assert parse_generate_response(_answer(**finished), [[1]], 1, "u",
                                   routing=(2, 3))[0][0].routed_experts.shape == (2, 2, 3)
    with pytest.raises(EngineRequestError, match="not a multiple of 4 layers x top-2"):
        parse_generate_response(_answer(**finished), [[1]], 1, "u", routing=(4, 2))


def test_replica_peers_that_disagree_on_their_prompts_are_refused():
    from megatron_qarl.rollout.sglang.driver_generation import DriverGeneration

    class Engine:
        def generate(self, prompts, params):
            raise AssertionError("not reached")

    driver = DriverGeneration(Engine(), dp_rank=0)
    with pytest.raises(SGLangError, match="rank 1 of data-parallel rank 0 sent other prompts"):
        driver._generate_for([(0, [[1]]), (0, [[2]])], SamplingParams())


def test_the_oldest_supported_version_is_accepted():
    check_server_version("0.5.21", "w4a16-g128", "http://x")
    with pytest.raises(EngineRequestError, match="14158"):
        check_server_version("0.5.20", "w4a16-g128", "http://x")


def test_config_value_checks():
    SGLangConfig(dims=DIMS, scheme_name="none", urls=["http://a:1"], retries=0)
    with pytest.raises(ValueError, match="--rollout-retries must be >= 0"):
        SGLangConfig(dims=DIMS, scheme_name="none", urls=["http://a:1"], retries=-1)
    with pytest.raises(ValueError, match="--enable-return-routed-experts"):
        SGLangConfig(dims=DIMS, scheme_name="none", launch=LaunchSpec(model_path="/m"),
                     routing_replay=True)
