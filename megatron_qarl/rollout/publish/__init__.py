"""Engine-agnostic weight publishing: the learner's cached quantized shards -> full tensors
under HF serving names -> flattened buckets. The SGLang bridge sends the buckets."""
from .buckets import Bucket, BucketEntry, plan_buckets
from .hf_tensors import to_hf_tensors
from .params import Partition, ShardedParam, model_params
from .reshard import ParallelGroups, gather_full
from .stream import hf_stream

__all__ = ["Bucket", "BucketEntry", "plan_buckets", "to_hf_tensors", "Partition",
           "ShardedParam", "model_params", "ParallelGroups", "gather_full", "hf_stream"]
