"""Checks that need SGLang's own classes, run in a separate interpreter by
test_sglang_payloads.py: importing sglang patches transformers process-wide, which must not
leak into the rest of the test session. Prints one JSON object: scenario -> "ok" | traceback.

Usage: python sglang_scenarios.py SGLANG_CPU_DIR
"""
import json
import os
import sys
import traceback

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from fake_sglang_server import FakeSGLangServer  # noqa: E402
from sglang.srt.utils import MultiprocessingSerializer  # noqa: E402
from sglang.srt.weight_sync.tensor_bucket import FlattenedTensorBucket  # noqa: E402
from tiny_shards import (DIMS, SCHEME, expected_serving, full_hf_weights,  # noqa: E402
                         rank_shards)

from megatron_qarl.rollout import SamplingParams  # noqa: E402
from megatron_qarl.rollout.publish import (ParallelGroups, ShardedParam,  # noqa: E402
                                           plan_buckets)
from megatron_qarl.rollout.sglang import (PublishError, SGLangConfig, SGLangError,  # noqa: E402
                                          SGLangRolloutEngine)
from megatron_qarl.rollout.sglang.payload import (distributed_update_body,  # noqa: E402
                                                  sglang_bucket, tensor_update_body)
from megatron_qarl.rollout.sglang.errors import EngineUnavailable  # noqa: E402
from megatron_qarl.rollout.sglang.pool import DOWN, STALE, UP  # noqa: E402

MIXED = [("a.weight_packed", torch.randint(-2**31, 2**31 - 1, (5, 3), dtype=torch.int32)),
         ("a.weight_scale", torch.randn(5, 3).to(torch.bfloat16)),  # 30 bytes: odd words
         ("a.weight_shape", torch.tensor([5, 24])),
         ("b.weight", torch.randn(3, 7).to(torch.float8_e4m3fn)),
         ("b.weight_scale_inv", torch.rand(1, 1)),
         ("c.weight", torch.randn(2, 3).to(torch.bfloat16))]


def server_decode(payload, load_format):
    """What the server does with one rank's payload (weight_updater, flattened_bucket)."""
    assert load_format == "flattened_bucket"
    data = MultiprocessingSerializer.deserialize(payload)  # SGLang's allow-list unpickler
    return FlattenedTensorBucket(flattened_tensor=data["flattened_tensor"],
                                 metadata=data["metadata"]).reconstruct_tensors()


def payload_round_trip():
    buckets = list(plan_buckets(MIXED, 64))
    assert len(buckets) > 1
    got = {}
    for bucket in buckets:
        body = tensor_update_body(sglang_bucket(bucket), tp_size=2)
        assert body["load_format"] == "flattened_bucket" and body["flush_cache"] is False
        per_rank = [dict(server_decode(p, "flattened_bucket"))
                    for p in body["serialized_named_tensors"]]
        assert per_rank[0].keys() == per_rank[1].keys()
        for name in per_rank[0]:  # each TP rank's own payload holds the whole bucket
            assert torch.equal(per_rank[0][name].view(torch.uint8),
                               per_rank[1][name].view(torch.uint8))
        got.update(per_rank[1])
        # same layout as SGLang builds from the same tensors, and as it allocates for NCCL
        ref = FlattenedTensorBucket(named_tensors=list(zip([e.name for e in bucket.entries],
                                                           bucket.tensors)))
        ours = [(e.name, tuple(e.shape), e.dtype, e.start, e.end) for e in bucket.entries]
        assert ours == [(m.name, tuple(m.shape), m.dtype, m.start_idx, m.end_idx)
                        for m in ref.get_metadata()]
        nccl = distributed_update_body(bucket, "g")
        empty = FlattenedTensorBucket.empty(nccl["names"], nccl["dtypes"], nccl["shapes"],
                                            "cpu")
        assert [(m.start_idx, m.end_idx) for m in empty.get_metadata()] == \
            [(e.start, e.end) for e in bucket.entries]
        assert torch.equal(ref.get_flattened_tensor(), bucket.flatten())
    for name, t in MIXED:
        assert got[name].dtype == t.dtype and got[name].shape == t.shape, name
        assert torch.equal(got[name].view(torch.uint8), t.view(torch.uint8)), name


def _engine(servers, **kw):
    hf = full_hf_weights()
    cfg = SGLangConfig(dims=DIMS, scheme_name="w4a16-g32", urls=[s.url for s in servers],
                       request_timeout_s=5, control_timeout_s=kw.pop("control_timeout", 5),
                       backoff_s=0.01, bucket_mb=0.02, top_k=2,
                       colocated=kw.pop("colocated", False))
    params = kw.pop("params", lambda model: rank_shards(hf, 1, 0, 1, 0, 1, 0))
    return SGLangRolloutEngine(cfg, groups=lambda: ParallelGroups(None, None, None, True, True),
                               params=params), hf


SESSION = ["/pause_generation", "/flush_cache", "/begin_weight_update"]
CLOSE = ["/end_weight_update", "/update_weight_version", "/continue_generation"]


def _update_calls(server):
    return [c for c in server.calls if c not in ("/health", "/server_info", "/generate")]


def publish_session_order_and_content():
    servers = [FakeSGLangServer(tp_size=2, decode_payload=server_decode) for _ in range(2)]
    engine, hf = _engine(servers)
    engine.publish_weights(model=None, version=1)
    expected = expected_serving(hf)
    for s in servers:
        calls = _update_calls(s)
        n = calls.count("/update_weights_from_tensor")
        assert n >= 2 and calls == SESSION + ["/update_weights_from_tensor"] * n + CLOSE, calls
        assert s.received.keys() == expected.keys()
        for name, t in expected.items():
            assert s.received[name].dtype == t.dtype and torch.equal(s.received[name], t), name
        assert s.weight_version == "1"
    samples = engine.generate([[1, 2]], SamplingParams(n=2))
    assert [x.weight_version for x in samples[0]] == [1, 1]


def publish_engine_dies_midway():
    servers = [FakeSGLangServer(decode_payload=server_decode) for _ in range(2)]
    servers[1].die_on["/update_weights_from_tensor"] = 2
    engine, _ = _engine(servers)
    engine.publish_weights(model=None, version=3)
    assert [s.state for s in engine.pool.slots] == [UP, STALE]
    assert "/continue_generation" not in servers[1].calls  # never resumed half-updated
    groups = engine.generate([[1], [2], [3]], SamplingParams())
    assert {g[0].meta["engine"] for g in groups} == {servers[0].url}
    assert all(g[0].weight_version == 3 for g in groups)


def publish_after_a_failed_bucket_updates_the_engine_again():
    """An engine that failed one bucket kept SGLang's weight-update session open (it was never
    sent /end_weight_update), so every later begin was refused and it stayed stale."""
    servers = [FakeSGLangServer(decode_payload=server_decode) for _ in range(2)]
    servers[1].reject.add("/update_weights_from_tensor")
    engine, _ = _engine(servers)
    engine.publish_weights(model=None, version=1)
    assert [s.state for s in engine.pool.slots] == [UP, STALE] and not servers[1].in_update
    assert servers[1].paused and "/continue_generation" not in servers[1].calls
    servers[1].reject.clear()
    engine.publish_weights(model=None, version=2)
    assert [s.state for s in engine.pool.slots] == [UP, UP]
    assert [s.weight_version for s in servers] == ["2", "2"]


def publish_stream_error_fails_every_engine():
    """An error raised while the buckets are made (here serving_params' refusal of a quantized
    dense tensor, half-way through) left every engine paused inside its weight-update session
    and still in rotation: the next publish's begin was refused by all of them."""
    servers = [FakeSGLangServer(decode_payload=server_decode) for _ in range(2)]
    shards = rank_shards(full_hf_weights(), 1, 0, 1, 0, 1, 0)
    dense = next(i for i, p in enumerate(shards) if i > len(shards) // 2
                 and p.partition.experts_per_rank is None and p.value.dim() == 2)
    bad = list(shards)
    param = shards[dense]
    bad[dense] = ShardedParam(param.name, SCHEME.quantize_weight(param.value.float()),
                              param.partition)
    stream = {"params": bad}
    engine, _ = _engine(servers, params=lambda model: stream["params"])
    try:
        engine.publish_weights(model=None, version=1)
    except ValueError as e:
        assert "--quant-targets experts" in str(e), e
    else:
        raise AssertionError("the stream's error must reach the caller")
    assert [s.state for s in engine.pool.slots] == [STALE, STALE]
    for s in servers:
        assert "/update_weights_from_tensor" in s.calls  # the error came after some buckets
        assert s.paused and not s.in_update and "/continue_generation" not in s.calls
    assert engine.weight_version == 0
    stream["params"] = shards
    engine.publish_weights(model=None, version=2)
    assert [s.state for s in engine.pool.slots] == [UP, UP]
    assert [s.weight_version for s in servers] == ["2", "2"]


def publish_rejected_end_keeps_engine_paused():
    servers = [FakeSGLangServer(decode_payload=server_decode) for _ in range(2)]
    servers[0].reject.add("/end_weight_update")
    engine, _ = _engine(servers)
    engine.publish_weights(model=None, version=1)
    assert servers[0].paused and "/continue_generation" not in servers[0].calls
    assert [s.state for s in engine.pool.slots] == [STALE, UP]


def publish_timeout_then_total_failure():
    servers = [FakeSGLangServer(decode_payload=server_decode)]
    servers[0].delay["/begin_weight_update"] = 2.0
    engine, _ = _engine(servers, control_timeout=0.5)
    try:
        engine.publish_weights(model=None, version=1)
    except PublishError as e:
        assert "v1" in str(e) and servers[0].url in str(e)
    else:
        raise AssertionError("a publish no engine took must raise")
    assert "/update_weights_from_tensor" not in servers[0].calls
    assert engine.weight_version == 0


def publish_skips_unreachable_engine_until_the_next():
    """An engine down and unreachable during a publish keeps the old weights: a later health
    check must not bring it back (it would sample with them), the next publish updates it."""
    servers = [FakeSGLangServer(decode_payload=server_decode) for _ in range(2)]
    engine, _ = _engine(servers)
    engine.publish_weights(model=None, version=1)
    engine.pool.mark(engine.pool.slots[1], DOWN, "a generate call failed")
    servers[1].reject.add("/health")
    engine.publish_weights(model=None, version=2)
    servers[1].reject.discard("/health")  # answers again, still on version 1
    assert [s.state for s in engine.pool.slots] == [UP, STALE]
    assert "unreachable during publish of v2" in engine.pool.slots[1].reason
    servers[0].reject.add("/health")
    engine.pool.mark(engine.pool.slots[0], DOWN, "a generate call failed")
    try:
        engine.generate([[1]], SamplingParams())
    except EngineUnavailable as e:
        assert "no SGLang engine in rotation" in str(e) and "stale" in str(e), e
    else:
        raise AssertionError("the stale engine was brought back")
    servers[0].reject.discard("/health")
    engine.publish_weights(model=None, version=3)
    assert [s.state for s in engine.pool.slots] == [UP, UP]
    assert [s.weight_version for s in servers] == ["3", "3"]


def ipc_flattens_each_bucket_once_for_all_engines():
    """Every engine's payload shares one GPU buffer a bucket (not a copy each)."""
    from megatron_qarl.rollout.publish.buckets import Bucket
    servers = [FakeSGLangServer(tp_size=2, decode_payload=server_decode) for _ in range(3)]
    engine, _ = _engine(servers)
    flatten, made = Bucket.flatten, []
    Bucket.flatten = lambda self: made.append(flatten(self)) or made[-1]
    try:
        engine.publish_weights(model=None, version=1)
    finally:
        Bucket.flatten = flatten
    sent = servers[0].calls.count("/update_weights_from_tensor")
    assert sent >= 2 and len(made) == sent, (len(made), sent)
    assert all(s.calls.count("/update_weights_from_tensor") == sent for s in servers)


def nccl_publish_rebuilds_the_group_without_a_failed_engine():
    """NCCL transfer (gloo here, engines in their own processes): an engine that failed one
    bucket stayed in the broadcast group, so the next bucket's broadcast waited for ranks that
    never joined (with NCCL a hang until the watchdog) and the healthy engine was lost too."""
    import multiprocessing
    import socket

    import sglang.srt.utils as sglang_utils
    from fake_nccl_engine import gloo_group, serve

    from megatron_qarl.rollout.sglang.http_client import EngineClient
    from megatron_qarl.rollout.sglang.pool import EngineSlot
    from megatron_qarl.rollout.sglang.session import UpdateSession
    from megatron_qarl.rollout.sglang.transfer import NcclTransport

    joined = []  # NcclTransport.open imports it from here
    sglang_utils.init_custom_process_group = lambda **kw: joined.append(kw) or gloo_group(**kw)
    ctx = multiprocessing.get_context("spawn")
    queues = [ctx.Queue() for _ in range(2)]
    here = os.path.dirname(os.path.abspath(__file__))
    procs = [ctx.Process(target=serve, args=(sys.argv[1], here, q, fail), daemon=True)
             for q, fail in zip(queues, (None, 1))]
    for p in procs:
        p.start()
    try:
        # each engine imports torch and SGLang in a fresh interpreter first
        slots = [EngineSlot(EngineClient(q.get(timeout=180), 30)) for q in queues]
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        buckets = plan_buckets([(f"w{i}", torch.randn(64)) for i in range(3)], 256)
        UpdateSession(slots, NcclTransport("127.0.0.1", port, timeout_s=30), 1, "abort",
                      30).run(buckets)
        assert [s.state for s in slots] == [UP, STALE], [s.state for s in slots]
        # the group's collectives give up with the publish's timeout (not torch's 30 min)
        assert {kw["timeout"].total_seconds() for kw in joined} == {30}, joined
    finally:
        for p in procs:
            p.kill()


def samples_of_weights_older_than_the_publish_are_refused():
    """An engine that answers after a publish with samples of its old weights (a version that
    never took) fails the rollout rather than being trained on as the new policy's."""
    servers = [FakeSGLangServer(decode_payload=server_decode)]
    engine, _ = _engine(servers)
    engine.publish_weights(model=None, version=1)
    servers[0].weight_version = "0"
    try:
        engine.generate([[1, 2]], SamplingParams())
    except SGLangError as e:
        assert "weight version 0, expected 1" in str(e), e
    else:
        raise AssertionError("samples of stale weights were returned")


def publish_after_a_release_takes_the_weights_back_first():
    """Colocated: a publish straight after release_memory re-allocates the weights before the
    session writes into them; KV cache and CUDA graphs return only at the next generate."""
    servers = [FakeSGLangServer(decode_payload=server_decode)]
    engine, _ = _engine(servers, colocated=True)
    engine.release_memory()
    engine.publish_weights(model=None, version=1)
    memory = ("/release_memory_occupation", "/resume_memory_occupation", "/pause_generation",
              "/generate")
    assert [c for c in servers[0].calls if c in memory] == \
        ["/release_memory_occupation", "/resume_memory_occupation", "/pause_generation"]
    engine.generate([[1]], SamplingParams())
    assert [c for c in servers[0].calls if c in memory][3:] == \
        ["/resume_memory_occupation", "/generate"]


SCENARIOS = [payload_round_trip, publish_session_order_and_content, publish_engine_dies_midway,
             publish_after_a_failed_bucket_updates_the_engine_again,
             publish_stream_error_fails_every_engine, publish_rejected_end_keeps_engine_paused,
             publish_timeout_then_total_failure,
             publish_skips_unreachable_engine_until_the_next,
             ipc_flattens_each_bucket_once_for_all_engines,
             nccl_publish_rebuilds_the_group_without_a_failed_engine,
             samples_of_weights_older_than_the_publish_are_refused,
             publish_after_a_release_takes_the_weights_back_first]

if __name__ == "__main__":
    results = {}
    for fn in SCENARIOS:
        try:
            fn()
            results[fn.__name__] = "ok"
        except BaseException:  # noqa: BLE001 - reported to the parent test
            results[fn.__name__] = traceback.format_exc()
    print(json.dumps(results))
