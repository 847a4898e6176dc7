"""Gluon kernels launched from a cache of their compiled forms.

Triton's JITFunction.run binds and specializes every argument on every call: for the Hopper
kernels here (a dozen arguments, tensor descriptors among them) 11-20 us of an eager call's
host time, which the learner's eager forward and backward and the engine's prefill pay each
call. A launch here looks the compiled kernel up by a key at least as fine as Triton's
specialization and launches it with CompiledKernel[grid]. The key holds each tensor's dtype
and 16-byte alignment, a descriptor's dtype, block and layout, the integers Triton
specializes by value (it keys on 1 and multiples of 16), the others by i32 or i64, and every
constexpr and option; so a key never meets a kernel built for other arguments. The first call
of a key goes through Triton, which compiles the kernel. Host time a call (H200, round 39,
medians of 7 rounds): W4A16 WS 67.5 -> 50.5 us, its grad_input 71.0 -> 50.8, the W4A16
decode kernel 83.5 -> 64.1, FP8 WS 83.3 -> 72.3; the rest is Triton's launcher (the TMA
descriptors' encoding) and the wrappers' own Python.
"""
import torch
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

_I32 = range(-2**31, 2**31)


def _arg_key(arg, specialized: bool):
    """What of one runtime argument may select its compiled kernel (jit.py's
    specialize_impl: dtype and divisibility by 16 of a pointer; 1, divisibility by 16 and i32
    or i64 of an integer, the last alone where it is not specialized)."""
    kind = type(arg)
    if kind is int:
        return arg if specialized else arg in _I32
    if isinstance(arg, torch.Tensor):
        return arg.dtype, arg.data_ptr() % 16 == 0
    if kind is TensorDescriptor:
        return (arg.base.dtype, tuple(arg.block_shape), arg.layout, arg.padding,
                len(arg.shape))
    return arg  # bools, floats, None and constexprs by value


class CachedLaunch:
    """kernel[grid](*args, **kwargs) for a gluon.jit kernel, its compiled forms kept by key.
    args: the runtime arguments in order; kwargs: the constexprs that follow them, by name, and
    Triton's options (num_warps, maxnreg, launch_pdl)."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.names = kernel.arg_names
        self.specialized = [not p.do_not_specialize for p in kernel.params]
        self.compiled = {}

    def key(self, args: tuple, kwargs: dict) -> tuple:
        return tuple(map(_arg_key, args, self.specialized)), tuple(kwargs.items())

    def __call__(self, grid: tuple, *args, **kwargs):
        key = (torch.cuda.current_device(), self.key(args, kwargs))
        launch = self.compiled.get(key)
        if launch is None:
            compiled = self.kernel[grid](*args, **kwargs)  # compiles, or finds, and launches
            self.compiled[key] = (compiled, [kwargs[n] for n in self.names[len(args):]])
            return
        compiled, constexprs = launch
        compiled[tuple(grid) + (1, ) * (3 - len(grid))](*args, *constexprs)
