"""On PYTHONPATH: every process samples with the torch race (the kernel's registration dropped)."""
from megatron_qarl.quant import ops
ops.register_race_argmax = lambda *args: None
