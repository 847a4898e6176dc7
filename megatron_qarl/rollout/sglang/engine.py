"""The `sglang` RolloutEngine: generation on SGLang servers, weight publishing into them,
colocated memory release/resume.

Construct it on every trainer rank. Servers are launched and spoken to by the driver (global
rank 0, which is also the rank the gathers deliver full tensors to); `generate` is for the
driver; `publish_weights` is collective (every rank drives its share of the gathers).
"""
from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, Iterator, List, Optional

import torch.distributed as dist

from ...quant import QuantizedWeight
from ..base import RolloutEngine, Sample, SamplingParams, require_tokens
from ..publish import ParallelGroups, ShardedParam, hf_stream, model_params, plan_buckets
from .config import SGLangConfig, check_expert_split
from .errors import EngineRequestError, EngineUnavailable, SGLangError
from .generation import generate_request, parse_generate_response, sample_seeds
from .http_client import EngineClient, RetryPolicy
from .launcher import ServerProcess
from .pool import DOWN, LOST, STALE, UP, EnginePool, EngineSlot, for_each_engine
from .session import UpdateSession
from .transfer import make_transport
from .version import check_server_version

log = logging.getLogger(__name__)

MEMORY_TAGS = ("weights", "kv_cache", "cuda_graph")


def _is_driver() -> bool:
    return not dist.is_initialized() or dist.get_rank() == 0


def serving_params(params: Iterable[ShardedParam], scheme_name: str) -> Iterator[ShardedParam]:
    """SGLang quantizes routed experts in place and nothing else (formats.md); a quantized
    dense tensor under W4A16 could not be restored by begin_weight_update. Checked on every
    rank at the same tensor, so all ranks stop together."""
    for p in params:
        if (scheme_name.startswith("w4a16") and isinstance(p.value, QuantizedWeight)
                and not p.partition.expert):
            raise ValueError(
                f"{p.name} is W4A16-quantized, but SGLang keeps dense layers in bf16 and "
                f"updates only routed experts in place; quantize experts only "
                f"(--quant-targets experts) when the rollout engine is SGLang")
        yield p


class SGLangRolloutEngine(RolloutEngine):
    def __init__(self, config: SGLangConfig,
                 groups: Callable[[], ParallelGroups] = ParallelGroups.from_megatron,
                 params: Callable[[object], Iterable[ShardedParam]] = model_params):
        self.config = config
        self._groups, self._params = groups, params
        self.weight_version = 0
        self._published = False
        self._weights_valid = True  # False from release_memory until the next publish
        self._released: set = set()
        self.servers: List[ServerProcess] = []
        self.pool: Optional[EnginePool] = None
        self.transport = make_transport(config.transfer, config.control_timeout_s,
                                        config.nccl_master_address, config.nccl_master_port)
        if _is_driver():
            try:
                self.pool = EnginePool(self._connect())
            except BaseException:
                self.shutdown()  # servers launched before a failed check must not outlive it
                raise

    # -- servers -------------------------------------------------------------------------
    def _client(self, url: str) -> EngineClient:
        return EngineClient(url, self.config.request_timeout_s,
                            RetryPolicy(self.config.retries, self.config.backoff_s))

    def _connect(self) -> List[EngineSlot]:
        cfg = self.config
        if cfg.launch is not None:
            self.servers = [ServerProcess(cfg.launch, e, cfg.log_dir)
                            for e in range(cfg.launch.num_engines)]
            for s in self.servers:
                s.start()
            urls = [cfg.launch.url(e) for e in range(cfg.launch.num_engines)]
        else:
            urls = list(cfg.urls)
        slots = []
        for i, url in enumerate(urls):
            client = self._client(url)
            if self.servers:
                self.servers[i].wait_healthy(client, cfg.startup_timeout_s)
            else:
                client.wait_healthy(cfg.startup_timeout_s)
            info = client.server_info()
            check_server_version(info.get("version", "0"), cfg.scheme_name, url)
            if int(info.get("dp_size", 1)) != 1:
                raise EngineRequestError(
                    f"{url}: dp_size {info['dp_size']}; SGLang weight updates need "
                    f"dp_size 1: start one server per data-parallel replica instead")
            _check_server_settings(info, cfg, url)
            if not self.servers and "ep_size" in info:  # launched ones: checked by the flags
                check_expert_split(cfg.scheme_name, cfg.dims.ffn, int(info.get("tp_size", 1)),
                                   int(info["ep_size"]), url,
                                   "restart the server with a larger --ep-size (up to its "
                                   "--tp-size) or a smaller --tp-size")
            slots.append(EngineSlot(client, tp_size=int(info.get("tp_size", 1)), info=info))
        return slots

    def shutdown(self) -> None:
        try:
            if self.pool is not None:
                self.transport.close(self.pool.slots)
        finally:  # a failed NCCL teardown must not leave the servers running
            for s in self.servers:
                s.stop()

    # -- generation ----------------------------------------------------------------------
    def generate(self, prompts: List[List[int]], params: SamplingParams) -> List[List[Sample]]:
        require_tokens(prompts)
        if self.pool is None:
            raise SGLangError("generate() runs on the driver (global rank 0); broadcast its "
                              "samples to the other ranks")
        if not self._weights_valid:
            raise SGLangError("the engines' weights were released: call resume_memory() and "
                              "publish_weights() before generating")
        self._resume_tags(("kv_cache", "cuda_graph"))
        k = self.config.prompts_per_request
        chunks = [prompts[i:i + k] for i in range(0, len(prompts), k)]
        if not chunks:
            return []
        workers = max(1, min(len(chunks), 8 * len(self.pool.slots)))
        with ThreadPoolExecutor(max_workers=workers) as ex:
            results = list(ex.map(lambda i: self._generate_chunk(chunks[i], params, i * k),
                                  range(len(chunks))))
        return [group for r in results for group in r]

    def _generate_chunk(self, prompts, params: SamplingParams,
                        first: int) -> List[List[Sample]]:
        """first: the chunk's first prompt in the call (its samples' seeds)."""
        cfg = self.config
        seeds = None if cfg.seed is None else sample_seeds(cfg.seed, self.weight_version, first,
                                                           len(prompts), params.n)
        body = generate_request(prompts, params, cfg.routing_replay, seeds)
        routing = (cfg.dims.num_layers, cfg.top_k) if cfg.routing_replay else None
        failures, failed = [], []
        delays = RetryPolicy(cfg.retries, cfg.backoff_s).delays()  # doubling, capped
        while True:
            slot = self.pool.acquire(avoid=failed)
            try:
                answer = slot.client.post("/generate", body, retries=0)
            except EngineUnavailable as e:  # died or timed out: try another engine
                if not slot.client.healthy():  # one that answers (a slow batch) stays in rotation
                    self.pool.mark(slot, DOWN, str(e))
                failed.append(slot)
                failures.append(f"{slot.url}: {e}")
            else:
                groups = parse_generate_response(answer, prompts, params.n, slot.url, routing)
                aborted = sum(s.finish_reason == "abort" for g in groups for s in g)
                if not aborted:
                    self._check_versions(groups, slot)
                    return groups
                # cut short by the server (a pause, a drain): no sample to train on
                failed.append(slot)
                failures.append(f"{slot.url}: {aborted} samples aborted")
            finally:
                self.pool.release(slot)
            delay = next(delays, None)
            if delay is None:
                raise EngineUnavailable(f"/generate failed {len(failures)} times: "
                                        + "; ".join(failures))
            time.sleep(delay)

    def _check_versions(self, groups, slot) -> None:
        if not self._published:
            return
        for group in groups:
            for s in group:
                if s.weight_version != self.weight_version:
                    raise SGLangError(
                        f"{slot.url} sampled with weight version {s.weight_version}, expected "
                        f"{self.weight_version}: an engine served stale weights")

    # -- weights -------------------------------------------------------------------------
    def publish_weights(self, model, version: int) -> None:
        groups = self._groups()
        driver = _is_driver()
        if groups.is_sender() != driver:
            raise SGLangError("the rank holding full tensors after the gathers is not global "
                              "rank 0; publishing needs pipeline size 1 and Megatron's "
                              "default rank order")
        params = serving_params(self._params(model), self.config.scheme_name)
        buckets = plan_buckets(hf_stream(params, groups, self.config.dims),
                               self.config.bucket_bytes)
        if not driver:
            for _ in buckets:  # drive this rank's share of the gathers
                pass
            self.weight_version = version
            return
        self._resume_tags(("weights",))
        candidates = [s for s in self.pool.slots
                      if s.state != LOST and (s.state != DOWN or s.client.healthy())]
        session = UpdateSession(candidates, self.transport, version, self.config.pause_mode,
                                self.config.control_timeout_s)
        for s in self.pool.slots:  # stale, not down: a health check must not re-admit it
            if s not in candidates and s.state != LOST:
                self.pool.mark(s, STALE, f"unreachable during publish of v{version}")
        session.run(buckets)
        self.weight_version, self._published, self._weights_valid = version, True, True

    # -- colocated memory ----------------------------------------------------------------
    @property
    def colocated(self) -> bool:
        """Servers on the trainer's GPUs (memory saver on) free their memory while it trains;
        servers on their own GPUs keep it."""
        launch = self.config.launch
        return launch.colocated if launch is not None else self.config.colocated

    def _memory_call(self, path: str, tags) -> None:
        if self.pool is None or not tags or not self.colocated:
            return

        def one(slot):
            try:
                slot.client.post(path, {"tags": list(tags)},  # not safe to repeat in SGLang
                                 timeout_s=self.config.control_timeout_s, retries=0)
            except SGLangError as e:  # a down engine that answered again would be re-admitted
                self.pool.mark(slot, LOST, f"{path}: {e}; its memory is in an unknown state: "
                                           f"restart the server")
        for_each_engine([s for s in self.pool.slots if s.state == UP], one)

    def release_memory(self) -> None:
        """Free the engines' weights, KV cache and CUDA graphs (servers started with
        --enable-memory-saver) while the colocated trainer runs."""
        tags = [t for t in MEMORY_TAGS if t not in self._released]
        self._memory_call("/release_memory_occupation", tags)
        self._released.update(tags)
        self._weights_valid = False

    def resume_memory(self) -> None:
        """Re-allocate the weights; KV cache and CUDA graphs come back at the next generate,
        so publishing runs with the trainer's memory still free of them."""
        self._resume_tags(("weights",))

    def _resume_tags(self, tags) -> None:
        tags = [t for t in tags if t in self._released]
        self._memory_call("/resume_memory_occupation", tags)
        self._released.difference_update(tags)


def _check_server_settings(info: dict, cfg: SGLangConfig, url: str) -> None:
    """What a server reports of its start flags (/server_info is its ServerArgs) against what
    this run needs of it; a setting it does not report is taken on trust."""
    needs = []
    if cfg.routing_replay and info.get("enable_return_routed_experts") is False:
        needs.append("--enable-return-routed-experts (for --rollout-routing-replay)")
    if cfg.routing_replay and (info.get("enable_eplb") or info.get("ep_num_redundant_experts")):
        needs.append("no EPLB or redundant experts (--rollout-routing-replay replays logical "
                     "expert ids; those make SGLang return physical ones)")
    if cfg.seed is not None and info.get("enable_deterministic_inference") is False:
        needs.append("--enable-deterministic-inference (for --deterministic-mode)")
    if cfg.launch is None and cfg.colocated and info.get("enable_memory_saver") is False:
        needs.append("--enable-memory-saver (for --sglang-colocated: without it releasing "
                     "the server's memory does nothing, and the trainer runs out of it)")
    if needs:
        raise EngineRequestError(f"{url}: restart the server with {'; '.join(needs)}")
