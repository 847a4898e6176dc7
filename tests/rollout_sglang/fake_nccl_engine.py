"""A fake SGLang engine process for --rollout-weight-transfer nccl, over gloo: it joins the
broadcast group on /init_weights_update_group, leaves it on /destroy_weights_update_group and
receives each announced bucket on /update_weights_from_distributed, as SGLang 0.5.23 does
(with SGLang's own FlattenedTensorBucket to allocate the receive buffer)."""
import datetime
import time

GLOO_TIMEOUT = datetime.timedelta(seconds=20)


def gloo_group(**kwargs):
    """SGLang's init_custom_process_group on gloo: the sender patches it in too."""
    from sglang.srt.utils import common

    return common.init_custom_process_group(**{**kwargs, "backend": "gloo",
                                               "timeout": GLOO_TIMEOUT})


def serve(sglang_dir: str, tests_dir: str, urls, fail_on_bucket=None) -> None:
    """Process target: put this engine's URL on `urls`, answer until the test kills it (at
    most 10 minutes: a loaded machine may take a minute to start both engines). fail_on_bucket:
    answer that bucket (1-based) with an error after receiving it, as a failed load would."""
    import sys

    sys.path[:0] = [sglang_dir, tests_dir]
    import torch.distributed as dist
    from fake_sglang_server import FakeSGLangServer
    from sglang.srt.weight_sync.tensor_bucket import FlattenedTensorBucket

    class Engine(FakeSGLangServer):
        received_buckets = 0

        def _init_weights_update_group(self, body):
            self.group = gloo_group(
                init_method=f"tcp://{body['master_address']}:{body['master_port']}",
                world_size=body["world_size"], rank=body["rank_offset"],
                group_name=body["group_name"])
            return 200, {"success": True, "message": ""}

        def _destroy_weights_update_group(self, _):
            dist.destroy_process_group(self.group)
            return 200, {"success": True, "message": ""}

        def _update_weights_from_distributed(self, body):
            if not self.in_update:
                return 400, {"success": False, "message": "update outside a session"}
            flat = FlattenedTensorBucket.empty(body["names"], body["dtypes"], body["shapes"],
                                               "cpu")
            dist.broadcast(flat.get_flattened_tensor(), src=0, group=self.group)
            self.received_buckets += 1
            if self.received_buckets == fail_on_bucket:
                return 400, {"success": False, "message": "injected load failure"}
            return 200, {"success": True, "message": ""}

    urls.put(Engine().url)
    time.sleep(600)
