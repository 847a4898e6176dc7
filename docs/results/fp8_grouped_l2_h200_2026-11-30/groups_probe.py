"""Session 56: gloo groups and TCP stores left alive across init_parallel calls on a GPU machine
(CPU: none). Prints the communication threads after each call, and the Python containers that
hold a group not registered any more (the last call's groups excepted)."""
import gc
import os

import torch.distributed as dist
from torch.distributed import distributed_c10d as c10d

from megatron_qarl.compat.cpu_testing import init_parallel


def threads():
    names = []
    for task in os.listdir("/proc/self/task"):
        try:
            names.append(open(f"/proc/self/task/{task}/comm").read())
        except OSError:
            pass
    return sum(n.startswith(("pt_gloo", "gloo_", "pt_tcpstore")) for n in names)


for call in range(5):
    init_parallel(tp=1, ep=1)
    print(f"call {call}: {threads()} communication threads", flush=True)
gc.collect()
live = set(map(id, c10d._world.pg_map))
for o in gc.get_objects():
    items = (o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, (list, tuple))
             else ())
    try:
        for key, value in items:
            if isinstance(value, dist.ProcessGroup) and id(value) not in live:
                owners = [type(r).__name__ + (f" {r.__name__}" if hasattr(r, "__name__") else "")
                          for r in gc.get_referrers(o)[:4]]
                print("held:", type(o).__name__, repr(key)[:60], "by", owners, flush=True)
    except Exception:  # noqa: BLE001 - a container that changes while read
        pass
