"""Gluon kernels launched from a cache of their compiled forms.

Triton's JITFunction.run binds and specializes every argument on every call: for the Hopper
kernels here (a dozen arguments, tensor descriptors among them) 11-20 us of an eager call's
host time, which the learner's eager forward and backward and the engine's prefill pay each
call. A launch here looks the compiled kernel up by Triton's own specialization and launches
it with CompiledKernel[grid]. The key holds what Triton's holds, read the same way (each
tensor's dtype and 16-byte alignment; each integer's type and, where Triton specializes it,
whether it is 1 or a multiple of 16; a descriptor's dtype, block and layout; every
constexpr's value; the options): a key never meets a kernel built for other arguments, and
the cache holds no more kernels than Triton's. The first call of a key goes through Triton,
which compiles the kernel. Host time a call (H200, round 39, medians of 7 rounds): W4A16 WS
67.5 -> 50.5 us, its grad_input 71.0 -> 50.8, the W4A16 decode kernel 83.5 -> 64.1, FP8 WS
83.3 -> 72.3; the rest is Triton's launcher (the TMA descriptors' encoding) and the wrappers'
own Python.
"""
import torch
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor


def _int_type(value: int) -> int:
    """i32, i64 or u64, as Triton types an integer argument."""
    return 0 if -2**31 <= value < 2**31 else 1 if -2**63 <= value < 2**63 else 2


def _arg_key(arg, specialized):
    """What of one argument selects its compiled kernel, as jit.py's specialize_impl reads it:
    a constexpr's value (specialized None); a tensor's dtype and 16-byte alignment; an
    integer's type, and where it is specialized whether it is 1 and whether a multiple of 16;
    a bool's or a float's type."""
    if specialized is None:
        return arg
    kind = type(arg)
    if kind is int:
        return (arg == 1, arg % 16 == 0, _int_type(arg)) if specialized else _int_type(arg)
    if isinstance(arg, torch.Tensor):
        return arg.dtype, arg.data_ptr() % 16 == 0
    if kind is TensorDescriptor:
        return (arg.base.dtype, tuple(arg.block_shape), arg.layout, arg.padding,
                len(arg.shape))
    return kind if kind in (bool, float) else arg  # None by value


class CachedLaunch:
    """kernel[grid](*args, **kwargs) for a gluon.jit kernel, its compiled forms kept by key.
    args: the kernel's parameters in order up to the first passed by name; kwargs: every one
    after them (CompiledKernel[grid] takes them all, positionally), and Triton's options
    (maxnreg, launch_pdl)."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.names = kernel.arg_names
        self.specialized = [None if p.is_constexpr else not p.do_not_specialize
                            for p in kernel.params]
        self.compiled = {}

    def key(self, args: tuple, kwargs: dict) -> tuple:
        return tuple(map(_arg_key, args, self.specialized)), tuple(kwargs.items())

    def __call__(self, grid: tuple, *args, **kwargs):
        key = (torch.cuda.current_device(), self.key(args, kwargs))
        launch = self.compiled.get(key)
        if launch is None:
            by_name = [kwargs[name] for name in self.names[len(args):]]
            compiled = self.kernel[grid](*args, **kwargs)  # compiles, or finds, and launches
            self.compiled[key] = (compiled, by_name)
            return
        compiled, by_name = launch
        compiled[tuple(grid) + (1, ) * (3 - len(grid))](*args, *by_name)
