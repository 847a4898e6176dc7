"""Warp-stall samples of an Nsight Compute source page (`ncu -i R --page source --csv
--print-source sass`) summed over ranges of SASS lines, one range a warp-specialized partition
(read off the USETMAXREG lines that start each), and the mbarrier waits with how often each
executed (its retries are the loop's second TRYWAIT). Usage: sass_partitions.py CSV
0,680,...  name,name,..."""
import collections
import csv
import sys

rows = list(csv.reader(open(sys.argv[1])))
header, data = rows[1], rows[2:]
col = {h: i for i, h in enumerate(header)}
stalls = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
bounds = [int(b) for b in sys.argv[2].split(",")]
for (a, b), name in zip(zip(bounds, bounds[1:]), sys.argv[3].split(",")):
    total = collections.Counter()
    for r in data[a:b]:
        for h in stalls:
            total[h[6:]] += int(r[col[h]] or 0)
    n = sum(total.values())
    print(f"{name:12s} lines {a}-{b}: {n:6d} samples, "
          + " ".join(f"{k} {100 * v / n:.0f}%" for k, v in total.most_common(6)))
for i, r in enumerate(data):
    src = r[col["Source"]].strip()
    if "TRYWAIT" in src or "DEPBAR" in src:
        print(f"{i:5d} exec {r[col['Instructions Executed']]:>8s} samples "
              f"{r[col['Warp Stall Sampling (All Samples)']]:>5s}  {src[:70]}")
