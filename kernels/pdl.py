"""Programmatic dependent launch (PDL) for this package's Triton kernels of decode-size calls.

A kernel launched with PDL (`launch_pdl=True`, on Hopper) may be scheduled while the kernel
before it in its stream still runs: it lets its own successor be scheduled at once and waits
(griddepcontrol.wait) for its predecessor before it touches memory that predecessor may write.
What that saves is the gap between back-to-back small kernels, a large part of a call of a few
microseconds in a decode step's CUDA graph (the Gluon kernels launch so since round 15 of
docs/kernel_rounds.md; w4a16_gemv also asks for its weights before the wait, round 54).
"""
import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait

from .gluon_hopper import is_hopper
from .numerics import INTERPRETED


#: token rows up to which the FP8 and INT8 decode kernels launch with PDL. H200, attention's
#: projections (docs/kernel_rounds.md round 55): at 1-8 tokens FP8 0.97-1.16x, INT8
#: 0.99-1.17x the speed without it (seven rounds); at 64 tokens the INT8 GEMM took 1.2-1.7x
#: the time with it, and experts blocks of 64-2048 routed rows moved 0.91-1.05x (three rounds)
PDL_MAX_ROWS = 8


def pdl_on(device: torch.device, rows: int = 1) -> bool:
    """Whether a call of `rows` token rows on this device launches with PDL: on Hopper (where
    it was measured; the check is cached, as a launch asks it), off the interpreter, up to
    PDL_MAX_ROWS rows."""
    return rows <= PDL_MAX_ROWS and not INTERPRETED and device.type == "cuda" and is_hopper(device)


@triton.jit
def wait_for_previous_kernel(PDL: tl.constexpr):
    """Lets the next kernel be scheduled, then waits until the previous kernel in the stream
    has finished and its writes are visible (nothing without PDL)."""
    if PDL:
        gdc_launch_dependents()
        gdc_wait()
