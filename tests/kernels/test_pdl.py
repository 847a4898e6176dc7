import torch

from qarl_kernels import pdl
from qarl_kernels.gluon_hopper import is_hopper


def test_pdl_only_for_few_rows_on_hopper(monkeypatch):
    """Programmatic dependent launch for calls of up to PDL_MAX_ROWS token rows on Hopper (the
    INT8 GEMM of 64 tokens ran slower with it, round 55), never under the interpreter or off
    CUDA. is_hopper's uncached form reads the faked capability."""
    cuda = torch.device("cuda", 0)
    monkeypatch.setattr(pdl, "INTERPRETED", False)
    capability = {"value": (9, 0)}
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device: capability["value"])
    monkeypatch.setattr(pdl, "is_hopper", lambda device: is_hopper.__wrapped__(device))
    assert pdl.pdl_on(cuda, 1) and pdl.pdl_on(cuda, pdl.PDL_MAX_ROWS)
    assert not pdl.pdl_on(cuda, pdl.PDL_MAX_ROWS + 1)
    assert pdl.pdl_on(cuda, 8) and not pdl.pdl_on(cuda, 9)  # round 55: 1-8 tokens gained
    assert not pdl.pdl_on(torch.device("cpu"), 1)
    capability["value"] = (8, 0)
    assert not pdl.pdl_on(cuda, 1)
    monkeypatch.setattr(pdl, "INTERPRETED", True)
    capability["value"] = (9, 0)
    assert not pdl.pdl_on(cuda, 1)
