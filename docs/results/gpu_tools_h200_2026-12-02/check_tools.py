"""Call 1's checks: the tools' output before and after with digits masked, and the figures of
each 'after' run against one another (the wall step = steady + fixed / tokens; a layer's ms =
fc1 + fc2, projected x layers; each step_s as printed)."""
import json
import re
import sys
from pathlib import Path

out = Path(sys.argv[1])


def masked(name):
    text = (out / name).read_text()
    return [re.sub(r"\d[\d.e+-]*", "N", line) for line in text.splitlines()
            if "Warning" not in line and "warn" not in line]


for stem in ("layers", "decode", "quantize"):
    if not (out / f"{stem}_before.txt").exists():
        print(f"{stem}: no output here")
        continue
    before, after = masked(f"{stem}_before.txt"), masked(f"{stem}_after.txt")
    if stem == "decode":  # its profiler table varies: the summary line
        before, after = ([x for x in lines if "per decode step" in x] for lines in (before, after))
    same = bool(before) and before == after
    print(f"{stem}: output with digits masked {'identical' if same else 'DIFFERS'}")

before, after = (json.loads((out / f"layers_{s}.json").read_text()) for s in ("before", "after"))
print("layers JSON keys identical:", before["bench"].keys() == after["bench"].keys())
printed = (out / "layers_after.txt").read_text()
for name, row in after["bench"].items():
    print(f"  {name}: step_s {row['step_s']:.4f}, printed '{row['step_s']:.3f} s/step':",
          f"{row['step_s']:.3f} s/step" in printed)

line = next(x for x in (out / "decode_after.txt").read_text().splitlines()
            if "per decode step" in x)
print("decode summary:", line)
nums = re.search(r"([\d.]+) ms per decode step.*steady step of ([\d.]+) ms \+ a batch's fixed "
                 r"([\d.]+) ms / (\d+)", line)
if nums:
    wall, steady, fixed, n = (float(g) for g in nums.groups())
    print(f"  wall {wall} vs steady + fixed / n = {steady + fixed / n:.3f}")

for side in ("before", "after"):
    if not (out / f"quantize_{side}.json").exists():
        print(f"quantize {side}: no JSON here")
        continue
    q = json.loads((out / f"quantize_{side}.json").read_text())
    keys = ("reference_path_ms", "trainer_path_ms", "fused_kernel_ms", "fused_kernel_with_stack_ms")
    sums = all(abs(q["one_layer"][k] - q["fc1"][k] - q["fc2"][k]) < 1e-9 for k in keys)
    proj = all(abs(q[f"projected_{q['layers']}_layers"][k] - q["layers"] * q["one_layer"][k])
               < 1e-9 for k in keys)
    print(f"quantize {side}: keys {list(q)}; one layer = fc1 + fc2: {sums}; projected: {proj};",
          "bit_identical", q["bit_identical"])
