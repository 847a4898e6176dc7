"""What a run reports: each kernel checked against its reference, the tables, the header of
the run's ceilings and the section it writes into docs/benchmarks.md.
"""
import datetime
import os
import platform

import torch
import triton

from ..moe_backward import WS_GRAD_ROWS_PER_EXPERT
from ..w4a16_gemm import DEQUANT_ROWS_PER_EXPERT, KEPT_OPERAND_ROWS_PER_EXPERT, WS_ROWS_PER_EXPERT
from .measure import DECODE_MAX_TOKENS, GRAPH_BATCH_REPLAYS, GRAPH_BATCHES, STEP_CALLS


class Checker:
    """The cases checked against the reference before timing, and the mismatches the run
    reports (printed as they happen, listed under the tables)."""

    def __init__(self):
        self.checked, self.failed = [], []

    def close(self, name, got, want, rtol=2**-7, atol=1e-2):
        """Within about a bf16 rounding of fp32-accumulated products (the defaults)."""
        try:
            torch.testing.assert_close(got.float(), want.float(), rtol=rtol, atol=atol)
            self.checked.append(name)
        except AssertionError as err:
            self._fail(name, " ".join(str(err).split("\n")[1:4]))

    def close_norm(self, name, got, want, tol=1e-2):
        """||got - want|| / ||want||: for FP8 GEMMs, whose Hopper tensor-core accumulation is
        coarser than fp32 (a few outputs near zero differ by more than a bf16 ulp)."""
        err = float((got.float() - want.float()).norm() / want.float().norm())
        if err < tol:
            self.checked.append(name)
        else:
            self._fail(name, f"relative error {err:.2e} (tolerance {tol})")

    def equal(self, name, got, want):
        if torch.equal(got, want):
            self.checked.append(name)
        else:
            self._fail(name, f"{int((got != want).sum())} of {got.numel()} elements differ")

    def _fail(self, name, why):
        self.failed.append(f"{name}: {why}")
        print("MISMATCH", self.failed[-1], flush=True)


def fmt(v, spec=".1f"):
    return "—" if v is None else format(v, spec)


class Table:
    def __init__(self, title, header):
        self.title, self.header, self.rows = title, header, []

    def add(self, *cells):
        if len(cells) != len(self.header):
            raise ValueError(f"{self.title}: {len(cells)} cells for {len(self.header)} columns")
        self.rows.append([c if isinstance(c, str) else fmt(c) for c in cells])
        print(" | ".join(self.rows[-1]), flush=True)

    def markdown(self):
        lines = [f"### {self.title}", "", "| " + " | ".join(self.header) + " |",
                 "|" + "---|" * len(self.header)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in self.rows]) + "\n"


def pct_copy(nbytes, us, peak):
    """Bytes moved in `us` microseconds as % of the measured copy bandwidth."""
    return 100 * nbytes / us / 1e3 / peak["copy_GBps"]


def rate_header(name="", flops=True):
    """The columns of `rates`, each named after the path it rates."""
    columns = ["GB/s", "%BW"] + (["TFLOP/s", "% bf16 peak"] if flops else [])
    return [f"{name} {c}" if name else c for c in columns]


def rates(us, nbytes, peak, flops=None):
    """performance.md's columns for a call that moves nbytes (and multiplies `flops`) in `us`
    microseconds: GB/s and % of the measured copy bandwidth, then TFLOP/s and % of the measured
    bf16 matmul where it multiplies. A call not timed (us None) gets empty cells."""
    if us is None:
        return [None] * (2 if flops is None else 4)
    cells = [nbytes / us / 1e3, pct_copy(nbytes, us, peak)]
    if flops is not None:
        rate = tflops(us, flops)
        cells += [rate, 100 * rate / peak["bf16_TFLOPs"]]
    return cells


def tflops(us, flops):
    return None if us is None else flops / us / 1e6


def run_header(peak, floor_us, command):
    props = torch.cuda.get_device_properties(0)
    return (f"GPU {props.name} ({props.multi_processor_count} SMs), torch {torch.__version__}, "
            f"triton {triton.__version__}, Python {platform.python_version()}, "
            f"{datetime.date.today().isoformat()}. Command: `{command}`.\n\n"
            f"Measured ceilings in this run: copy {peak['copy_GBps']:.0f} GB/s (read + write), "
            f"bf16 8192^3 matmul {peak['bf16_TFLOPs']:.0f} TFLOP/s; CUDA-graph launch floor "
            f"(one tiny kernel) {floor_us[0]:.1f} us with one call per graph, "
            f"{floor_us[1]:.1f} us per call with {STEP_CALLS}. GB/s = bytes of touched experts + "
            f"activations in and out over the time, %BW the same over the copy ceiling; "
            f"TFLOP/s = 2 x rows x N x K over the time, % bf16 peak the same over the matmul "
            f"ceiling. Times are medians of "
            f"triton.testing.do_bench with weights rotated over copies > 2x L2; the W4A16 "
            f"'graph' columns and tables replay CUDA graphs of {STEP_CALLS} calls (per call, the "
            f"median of {GRAPH_BATCHES} batches of {GRAPH_BATCH_REPLAYS} replays, rotating "
            f"the copies), as a decoding engine runs its "
            f"step (the FP8 tables: one call per graph): "
            f"read decode sizes (M <= {DECODE_MAX_TOKENS}) there, since under ~60 us do_bench "
            f"times the host launch of the Triton wrapper, not the kernel. The W4A16 "
            f"op dequantizes + uses torch._grouped_mm from {DEQUANT_ROWS_PER_EXPERT} "
            f"tokens/expert ({KEPT_OPERAND_ROWS_PER_EXPERT} with the operand kept), the int4 "
            f"kernel below that, and on Hopper the WS kernel from {WS_ROWS_PER_EXPERT.start} "
            f"to {WS_ROWS_PER_EXPERT.stop - 1} tokens/expert without a kept operand (and past "
            f"that for the experts block's fc2, whose router probs its epilogue applies); "
            f"'operand kept' is that path with the "
            f"dequantized operand made once per optimizer step (--quant-keep-operand, "
            f"2 B/param of GPU memory) instead of in every call. The backward's grad_input "
            f"takes the WS kernel below {WS_GRAD_ROWS_PER_EXPERT} tokens/expert without a kept "
            f"operand, dequantize + torch._grouped_mm otherwise.\n")


def _markers(key):
    return f"<!-- {key}: start -->", f"<!-- {key}: end -->"


def _span(path, text, key):
    """(start, past the end marker's line) of section `key` in text, or None where it has none;
    a start marker without an end after it is an error (a run would replace what follows)."""
    start, end = _markers(key)
    at = text.find(start)
    if at < 0:
        return None
    stop = text.find(end, at)
    if stop < 0:
        raise ValueError(f"{path}: {start} has no {end} after it; put the end marker back (a "
                         f"run replaces everything between the two)")
    return at, stop + len(end) + 1


def check_section(path, key):
    """Raises ValueError where `key`'s section of path could not be replaced: before a run."""
    if os.path.exists(path):
        _span(path, open(path).read(), key)


def write_section(path, body, key="qarl_kernels.bench", title="Kernels"):
    """Replace the section `key` of a shared markdown file, keeping the rest."""
    text = open(path).read() if os.path.exists(path) else "# Benchmarks\n\n"
    start, end = _markers(key)
    section = f"{start}\n## {title} (`python -m {key}`)\n\n{body}{end}\n"
    span = _span(path, text, key)
    if span:
        text = text[:span[0]] + section + text[span[1]:]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
