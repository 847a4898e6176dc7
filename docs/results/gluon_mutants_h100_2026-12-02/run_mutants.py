"""The Gluon kernels' GPU mutation review (mutants.py): run on a Hopper GPU from the repo root,

    python docs/results/gluon_mutants_h100_2026-12-02/run_mutants.py --out $OUT --workers 4 --deadline 400

First the baseline (the unmutated kernels) over the union of the mutants' tests, in parallel
chunks, aborting if any of them fails or skips; then each mutant in a copy of kernels/ at
/tmp/mut/<id>/qarl_kernels, its tests in a subprocess whose PYTHONPATH puts that copy first (and
drops every entry that provides qarl_kernels), up to --workers at a time. No mutant starts after
--deadline seconds; running ones are cut at --deadline + --grace. Writes $OUT/mutants.json,
$OUT/mutant_tails.txt (each mutant's last 30 lines of pytest output) and
$OUT/baseline_tail.txt.

    python docs/results/gluon_mutants_h100_2026-12-02/run_mutants.py --check

is the CPU pre-check (no GPU): each mutant applies once, its module imports, its sm_90a builds
(the covering test module's _compile_for_sm90, as the CI compile tests make them) compile, and
some build's PTX differs from the unmutated kernel's; then the tests' node ids collect and run
(skipping) on the unmutated tree.
"""
import argparse
import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)
from mutants import MUTANTS  # noqa: E402

PYTEST_FLAGS = ["-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-rfE",
                "--tb=short"]
IMPORT_TAG = "QARL_KERNELS_FILE="
#: Triton cache entries never copied from the baseline's cache into a mutant's: the Gluon
#: kernels (a mutant's own build must be compiled from its source; the rest are plain Triton
#: helpers of the tests, unchanged by any mutant)
GLUON_DEF = re.compile(r"@gluon\.jit[^\n]*\n\s*def\s+(\w+)")


def gluon_names() -> set:
    names = set()
    for folder in ("kernels", os.path.join("tests", "kernels")):
        for name in os.listdir(os.path.join(REPO, folder)):
            if name.endswith(".py"):
                with open(os.path.join(REPO, folder, name)) as f:
                    names.update(GLUON_DEF.findall(f.read()))
    return names


def clean_pythonpath() -> list:
    """The existing PYTHONPATH without the entries that provide qarl_kernels (on the GPU machine
    /tmp/pp, whose qarl_kernels links to the repo's kernels/). An entry that also holds other
    packages (a site folder with an installed copy) is kept, behind the mutant's folder, which
    then wins; the import check of each run says which copy was imported."""
    out = []
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if not entry:
            continue
        if os.path.exists(os.path.join(entry, "qarl_kernels")):
            others = set(os.listdir(entry)) - {"qarl_kernels", "__pycache__"}
            if not others:
                continue
        out.append(entry)
    return out


def make_copy(root: str, mutant=None) -> str:
    """kernels/ copied to root/qarl_kernels (mutated); returns root."""
    if os.path.exists(root):
        shutil.rmtree(root)
    os.makedirs(root)
    dst = os.path.join(root, "qarl_kernels")
    shutil.copytree(os.path.join(REPO, "kernels"), dst,
                    ignore=shutil.ignore_patterns("__pycache__"))
    if mutant is not None:
        path = os.path.join(dst, mutant["file"])
        with open(path) as f:
            src = f.read()
        count = src.count(mutant["old"])
        assert count == 1, f"{mutant['id']}: old occurs {count} times in {mutant['file']}"
        with open(path, "w") as f:
            f.write(src.replace(mutant["old"], mutant["new"]))
    return root


def env_for(root: str, cache: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, REPO] + clean_pythonpath())
    env["TRITON_CACHE_DIR"] = cache
    env.pop("PYTEST_ADDOPTS", None)
    return env


def module_of(mutant) -> str:
    return "qarl_kernels." + mutant["file"][:-3]


def pytest_command(tests: list, module: str, junit: str = None) -> list:
    """One interpreter: import the module under test, print where it came from, then pytest."""
    args = tests + PYTEST_FLAGS + ([f"--junitxml={junit}"] if junit else [])
    code = ("import importlib, sys, pytest\n"
            f"m = importlib.import_module({module!r})\n"
            f"print({IMPORT_TAG!r} + m.__file__, flush=True)\n"
            f"sys.exit(pytest.main({args!r}))\n")
    return [sys.executable, "-c", code]


def run_pytest(cmd, env, timeout):
    """(rc or None on timeout, output, seconds); the whole process group is killed on timeout."""
    start = time.time()
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=max(timeout, 1))
        return proc.returncode, out, time.time() - start
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass
        out, _ = proc.communicate()
        return None, out or "", time.time() - start


def summary_counts(out: str) -> dict:
    """passed/failed/errors/skipped of pytest's last summary line."""
    counts = {}
    lines = [l for l in out.splitlines() if re.search(r"\d+ (passed|failed|skipped|error)", l)]
    if lines:
        for n, kind in re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)",
                                  lines[-1]):
            counts["errors" if kind.startswith("error") else kind] = int(n)
    return counts


def first_failure(out: str) -> str:
    for line in out.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line[:160]
    for line in out.splitlines():
        if re.search(r"\b(Error|Exception)\b", line):
            return line.strip()[:160]
    return ""


def imported_from(out: str) -> str:
    for line in out.splitlines():
        if line.startswith(IMPORT_TAG):
            return line[len(IMPORT_TAG):].strip()
    return ""


def classify(rc, out, root, cut) -> str:
    where = imported_from(out)
    if where and not os.path.abspath(where).startswith(os.path.abspath(root) + os.sep):
        return "wrong import"
    if rc is None:
        return "cut (deadline)" if cut else "hang"
    counts = summary_counts(out)
    if rc == 0:
        if counts.get("passed", 0) > 0:
            return "survived"
        return "skipped-only" if counts.get("skipped", 0) else "no tests"
    if rc in (4, 5):
        return "selector error"
    if not where:
        return "import error"
    if counts.get("failed", 0) or counts.get("errors", 0):
        return "killed"
    return f"error rc={rc}"


def seed_cache(base_cache: str, cache: str, skip: set) -> None:
    """The baseline's Triton cache without the Gluon kernels' entries."""
    os.makedirs(cache, exist_ok=True)
    if not os.path.isdir(base_cache):
        return
    for entry in os.listdir(base_cache):
        src = os.path.join(base_cache, entry)
        if not os.path.isdir(src):
            continue
        stems = {os.path.splitext(f)[0].replace("__grp__", "") for f in os.listdir(src)}
        if stems & skip:
            continue
        shutil.copytree(src, os.path.join(cache, entry), dirs_exist_ok=True)


def chunks(tests: list, n: int) -> list:
    """Node ids dealt round-robin into up to n groups (each runs in its own process)."""
    bins = [tests[i::n] for i in range(max(1, min(n, len(tests))))]
    return [b for b in bins if b]


def junit_times(path: str) -> dict:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return {}
    out = {}
    for case in root.iter("testcase"):
        out[f"{case.get('classname')}::{case.get('name')}"] = float(case.get("time", 0))
    return out


def baseline(args, tests: list, start: float) -> dict:
    root = make_copy("/tmp/mut/_baseline")
    cache = os.path.join(root, "triton_cache")
    env = env_for(root, cache)
    parts = chunks(tests, args.baseline_procs)
    results = []
    with cf.ThreadPoolExecutor(len(parts)) as pool:
        futs = [pool.submit(run_pytest,
                            pytest_command(p, "qarl_kernels.w4a16_gluon",
                                           os.path.join(root, f"junit{i}.xml")),
                            env, args.baseline_timeout) for i, p in enumerate(parts)]
        for p, fut in zip(parts, futs):
            results.append((p,) + fut.result())
    ok = True
    times, tails = {}, []
    for i, (p, rc, out, secs) in enumerate(results):
        counts = summary_counts(out)
        good = (rc == 0 and imported_from(out).startswith(root + os.sep)
                and (counts.get("passed", 0) >= len(p) and not counts.get("skipped")
                     or args.accept_skips and counts.get("skipped", 0) >= len(p)))
        ok &= good
        times.update(junit_times(os.path.join(root, f"junit{i}.xml")))
        tails.append(f"=== baseline chunk {i}: rc={rc} {secs:.1f}s {counts} "
                     f"{'ok' if good else 'FAILED'}\n" + "\n".join(out.splitlines()[-30:]))
    with open(os.path.join(args.out, "baseline_tail.txt"), "w") as f:
        f.write("\n\n".join(tails) + "\n")
    return {"ok": ok, "seconds": round(time.time() - start, 1), "tests": len(tests),
            "chunks": [{"tests": len(p), "rc": rc, "seconds": round(s, 1),
                        "counts": summary_counts(o)} for p, rc, o, s in results],
            "test_seconds": times, "cache": cache}


def run_mutant(m, args, start, base_cache, skip):
    root = make_copy(f"/tmp/mut/{m['id']}", m)
    cache = os.path.join(root, "triton_cache")
    seed_cache(base_cache, cache, skip)
    hard_end = start + args.deadline + args.grace
    timeout = min(args.timeout, hard_end - time.time())
    cut = timeout < args.timeout
    rc, out, secs = run_pytest(pytest_command(m["tests"], module_of(m)), env_for(root, cache),
                               timeout)
    result = classify(rc, out, root, cut)
    return {"id": m["id"], "file": m["file"], "what": m["what"], "tests": m["tests"],
            "result": result, "rc": rc, "seconds": round(secs, 1),
            "counts": summary_counts(out), "first_failure": first_failure(out),
            "imported": imported_from(out), "started_at": None}, out


def main_gpu(args) -> int:
    start = time.time()
    os.makedirs(args.out, exist_ok=True)
    mutants = [m for m in MUTANTS if not args.only or m["id"] in args.only.split(",")]
    tests = sorted({t for m in mutants for t in m["tests"]})
    print(f"baseline: {len(tests)} tests in {min(args.baseline_procs, len(tests))} chunks",
          flush=True)
    base = baseline(args, tests, start)
    report = {"baseline": {k: v for k, v in base.items() if k != "cache"}, "mutants": []}
    json_path = os.path.join(args.out, "mutants.json")
    if not base["ok"]:
        with open(json_path, "w") as f:
            json.dump(report, f, indent=1)
        print(f"BASELINE FAILED after {base['seconds']}s: the unmutated kernels do not pass the "
              f"selected tests (see baseline_tail.txt); no mutant run. Chunks: {base['chunks']}")
        return 2
    print(f"baseline ok: {base['tests']} tests passed in {base['seconds']}s", flush=True)
    skip = gluon_names()
    results, tails = {}, {}
    with cf.ThreadPoolExecutor(args.workers) as pool:
        running = {}
        queue = list(mutants)
        while queue or running:
            while queue and len(running) < args.workers:
                if time.time() - start > args.deadline:
                    break
                m = queue.pop(0)
                fut = pool.submit(run_mutant, m, args, start, base["cache"], skip)
                running[fut] = (m, round(time.time() - start, 1))
            if queue and time.time() - start > args.deadline:
                for m in queue:
                    results[m["id"]] = {"id": m["id"], "file": m["file"], "what": m["what"],
                                        "tests": m["tests"], "result": "not run"}
                queue = []
            if not running:
                break
            done, _ = cf.wait(list(running), timeout=2, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                m, at = running.pop(fut)
                try:
                    res, out = fut.result()
                except Exception as e:  # noqa: BLE001 - reported, the review goes on
                    res, out = {"id": m["id"], "file": m["file"], "what": m["what"],
                                "tests": m["tests"], "result": f"runner error: {e}"}, ""
                res["started_at"] = at
                results[m["id"]] = res
                tails[m["id"]] = "\n".join(out.splitlines()[-30:])
                print(f"  {m['id']:<4} {res['result']:<14} {res.get('seconds', 0):>6}s "
                      f"(t={time.time() - start:.0f}s)", flush=True)
    ordered = [results[m["id"]] for m in mutants if m["id"] in results]
    report["mutants"] = ordered
    report["seconds"] = round(time.time() - start, 1)
    tally = {}
    for r in ordered:
        tally[r["result"]] = tally.get(r["result"], 0) + 1
    report["tally"] = tally
    with open(json_path, "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(args.out, "mutant_tails.txt"), "w") as f:
        for m in mutants:
            if m["id"] in tails:
                f.write(f"===== {m['id']} ({results[m['id']]['result']}): "
                        f"{' '.join(m['tests'])}\n{tails[m['id']]}\n\n")
    print(f"\n{'id':<4} {'result':<14} {'secs':>6}  first failing test")
    for r in ordered:
        print(f"{r['id']:<4} {r['result']:<14} {r.get('seconds', '-'):>6}  "
              f"{(r.get('first_failure') or '')[:110]}")
    print(f"tally: {tally}; baseline {base['seconds']}s; total {report['seconds']}s")
    return 0


# ---------------------------------------------------------------- the CPU pre-check

CHECK_CHILD = r"""
import hashlib, importlib, json, sys, traceback
import triton
sys.path.insert(0, "tests/kernels")
ptx = []
real = triton.compile
def compile_(*a, **kw):
    k = real(*a, **kw)
    ptx.append(hashlib.sha256(k.asm["ptx"].encode()).hexdigest()[:16])
    return k
triton.compile = compile_
module, builds = sys.argv[1], json.loads(sys.argv[2])
m = importlib.import_module(module)
print("IMPORTED=" + m.__file__, flush=True)
out = []
for b in builds:
    try:
        importlib.import_module(b["module"])._compile_for_sm90(**b["kwargs"])
        out.append({"ok": True, "ptx": ptx[-1]})
    except Exception:
        out.append({"ok": False, "error": traceback.format_exc()[-1500:]})
print("BUILDS=" + json.dumps(out), flush=True)
"""


def check_one(m, base_ptx):
    root = make_copy(f"/tmp/mutcheck/{m['id']}", m) if m else make_copy("/tmp/mutcheck/_base")
    env = env_for(root, os.path.join(root, "triton_cache"))
    env.pop("TRITON_INTERPRET", None)
    env["OMP_NUM_THREADS"] = "1"
    builds = m["compile"] if m else [b for x in MUTANTS for b in x["compile"]]
    if not m:  # each distinct build once
        builds = [json.loads(s) for s in sorted({json.dumps(b, sort_keys=True) for b in builds})]
    module = module_of(m) if m else "qarl_kernels.w4a16_gluon"
    proc = subprocess.run(["nice", "-n", "19", sys.executable, "-c", CHECK_CHILD, module,
                           json.dumps(builds)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=900)
    imported = re.search(r"^IMPORTED=(.*)$", proc.stdout, re.M)
    found = re.search(r"^BUILDS=(.*)$", proc.stdout, re.M)
    res = {"imported": imported.group(1) if imported else None,
           "import_ok": bool(imported) and imported.group(1).startswith(root + os.sep),
           "builds": json.loads(found.group(1)) if found else None,
           "stderr": proc.stderr[-1500:] if not found else ""}
    if m and res["builds"] is not None:
        keys = [json.dumps(b, sort_keys=True) for b in builds]
        res["ptx_differs"] = any(r.get("ok") and base_ptx.get(k) != r.get("ptx")
                                 for k, r in zip(keys, res["builds"]))
    if not m and res["builds"] is not None:
        res["ptx"] = {json.dumps(b, sort_keys=True): r.get("ptx")
                      for b, r in zip(builds, res["builds"])}
    return res


def main_check(args) -> int:
    start = time.time()
    problems = []
    ids = [m["id"] for m in MUTANTS]
    assert len(ids) == len(set(ids)), "duplicate mutant ids"
    for m in MUTANTS:  # (i) exactly once
        with open(os.path.join(REPO, "kernels", m["file"])) as f:
            n = f.read().count(m["old"])
        if n != 1:
            problems.append(f"{m['id']}: old occurs {n} times")
    base = check_one(None, {})
    if not base["import_ok"] or not base["builds"] or not all(b["ok"] for b in base["builds"]):
        print("unmutated builds failed:", json.dumps(base)[:3000])
        return 1
    print(f"unmutated: {len(base['ptx'])} distinct sm_90a builds compiled "
          f"({time.time() - start:.0f}s)", flush=True)
    with cf.ThreadPoolExecutor(args.check_procs) as pool:
        futs = {m["id"]: pool.submit(check_one, m, base["ptx"]) for m in MUTANTS}
        for m in MUTANTS:
            r = futs[m["id"]].result()
            builds_ok = bool(r["builds"]) and all(b["ok"] for b in r["builds"])
            verdict = ("ok" if r["import_ok"] and builds_ok and r.get("ptx_differs")
                       else "PROBLEM")
            print(f"  {m['id']:<4} import={'ok' if r['import_ok'] else r['imported']} "
                  f"builds={'ok' if builds_ok else 'FAILED'} "
                  f"ptx_differs={r.get('ptx_differs')} -> {verdict}", flush=True)
            if verdict != "ok":
                errs = [b.get("error", "")[-600:] for b in (r["builds"] or []) if not b["ok"]]
                problems.append(f"{m['id']}: {errs or r['stderr'][-600:]}")
    # the selectors: collected, and run (skipping on CPU) on the unmutated tree
    tests = sorted({t for m in MUTANTS for t in m["tests"]})
    root = make_copy("/tmp/mutcheck/_tree")
    env = env_for(root, os.path.join(root, "triton_cache"))
    rc, out, secs = run_pytest(pytest_command(tests, "qarl_kernels.w4a16_gluon"), env, 900)
    counts = summary_counts(out)
    where = imported_from(out)
    print(f"selectors: {len(tests)} node ids -> rc={rc} {counts} in {secs:.0f}s, "
          f"qarl_kernels from {where}")
    if rc != 0 or counts.get("skipped", 0) + counts.get("passed", 0) < len(tests) \
            or not where.startswith(root + os.sep):
        problems.append(f"selectors: rc={rc} {counts}\n" + "\n".join(out.splitlines()[-15:]))
    print(f"pre-check took {time.time() - start:.0f}s; "
          f"{'no problems' if not problems else 'PROBLEMS:'}")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="/tmp/mut_out")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--deadline", type=float, default=400, help="seconds: no mutant starts later")
    p.add_argument("--grace", type=float, default=15,
                   help="running mutants are cut at deadline + grace")
    p.add_argument("--timeout", type=float, default=90, help="seconds a mutant (a hang past it)")
    p.add_argument("--baseline-procs", type=int, default=8)
    p.add_argument("--baseline-timeout", type=float, default=240)
    p.add_argument("--only", default="", help="comma-separated mutant ids")
    p.add_argument("--check", action="store_true", help="the CPU pre-check")
    p.add_argument("--accept-skips", action="store_true",
                   help="a dry run of the GPU mode on a machine where the tests skip")
    p.add_argument("--check-procs", type=int, default=2)
    args = p.parse_args()
    os.chdir(REPO)
    return main_check(args) if args.check else main_gpu(args)


if __name__ == "__main__":
    sys.exit(main())
