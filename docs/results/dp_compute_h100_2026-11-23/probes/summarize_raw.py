"""Summarize `ncu --page raw --csv` of graph_case.py: the last profiled kernel (a graph replay),
its tensor and shared pipes, issue, memory throughput, and its top stall reasons."""
import csv
import sys

for path in sys.argv[1:]:
    rows = list(csv.reader(open(path)))
    header, units, last = rows[0], rows[1], rows[-1]
    m = dict(zip(header, last))
    u = dict(zip(header, units))
    print(f"== {path}: {m.get('Kernel Name', '?')[:40]} grid {m.get('launch__grid_size')}"
          f" duration {m.get('gpu__time_duration.sum')} {u.get('gpu__time_duration.sum')}")
    for key in sorted(m):
        if any(s in key for s in ("pipe_tensor", "pipe_shared", "inst_issued.avg.pct",
                                  "dram__throughput.avg.pct", "lts__throughput.avg.pct",
                                  "l1tex__throughput.avg.pct", "warps_eligible", "warps_active.avg.per")):
            print(f"  {key} = {m[key]} {u[key]}")
    stalls = {k: float(v.replace(",", "")) for k, v in m.items()
              if k.startswith("smsp__average_warps_issue_stalled_") and k.endswith("_per_issue_active.ratio")
              and v not in ("", "n/a")}
    total = sum(stalls.values())
    for k, v in sorted(stalls.items(), key=lambda kv: -kv[1])[:7]:
        name = k[len("smsp__average_warps_issue_stalled_"):-len("_per_issue_active.ratio")]
        print(f"  stall {name}: {v:.2f} cycles per issued instruction ({100 * v / total:.0f}%)")
