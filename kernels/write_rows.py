"""KV-cache writes: rows of `src` copied to rows of `dst` named on the device.

`dst.index_copy_(0, index, src)` does this, and with distinct rows it is deterministic. Under
torch's deterministic algorithms, though, index_copy_ takes index_put_'s sorting path with
bounds checks on every call: on the H100 that was most of the 0.33 ms that
`--deterministic-mode` added to a 3-layer decode step's 1.12 ms of GPU time. This kernel copies
each row once and does nothing else.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _write_rows_kernel(dst_ptr, index_ptr, src_ptr, ROW_BYTES, DST_ROWS, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    row = tl.broadcast_to(tl.load(index_ptr + i).to(tl.int64), [BLOCK])
    mask = (offs < ROW_BYTES) & (row >= 0) & (row < DST_ROWS)  # out of dst: dropped
    data = tl.load(src_ptr + i * ROW_BYTES + offs, mask=mask)
    tl.store(dst_ptr + row * ROW_BYTES + offs, data, mask=mask)


def write_rows(dst: torch.Tensor, index: torch.Tensor, src: torch.Tensor,
               block: int = 4096) -> torch.Tensor:
    """dst.index_copy_(0, index, src) for distinct entries of `index` (repeated ones would
    race); returns dst. An index out of dst's rows writes nothing (index_copy_ raises; checking
    here would need a host sync)."""
    if not dst.is_contiguous():
        raise ValueError(f"dst: strides {dst.stride()}; write_rows needs a contiguous buffer")
    if index.dim() != 1 or index.dtype.is_floating_point or src.shape[0] != index.shape[0] \
            or src.shape[1:] != dst.shape[1:] or src.dtype != dst.dtype:
        raise ValueError(
            f"write_rows: dst {dst.dtype} {tuple(dst.shape)}, index {index.dtype} "
            f"{tuple(index.shape)}, src {src.dtype} {tuple(src.shape)}; pass one integer index "
            f"per src row, and src rows of dst's shape and dtype")
    if index.numel() == 0 or dst[0].numel() == 0:
        return dst
    row_bytes = dst[0].numel() * dst.element_size()
    block = min(block, triton.next_power_of_2(row_bytes))
    _write_rows_kernel[(index.numel(), triton.cdiv(row_bytes, block))](
        dst.view(torch.uint8), index.contiguous(), src.contiguous().view(torch.uint8),
        row_bytes, dst.shape[0], BLOCK=block)
    return dst
