"""megatron-core 0.16.1's LayerWiseDistributedOptimizer (Muon's distributed optimizer) could not
save an fp32 run: its `sharded_state_dict` reads each chained optimizer's torch state under
'optimizer', where the mixed-precision wrapper of a bf16 run keeps it, but an fp32 run's
FP32Optimizer returns the torch state itself, and the first save failed with
KeyError: 'optimizer'."""
from __future__ import annotations

from megatron.core.optimizer.layer_wise_optimizer import LayerWiseDistributedOptimizer
from megatron.core.optimizer.optimizer import FP32Optimizer


class LayerWiseOptimizer(LayerWiseDistributedOptimizer):
    """Megatron's class; FP32Optimizer states go through its checkpoint metadata nested under
    'optimizer', as a bf16 run's are, and come back in their own layout, the one
    FP32Optimizer.load_state_dict reads."""

    def sharded_state_dict(self, model_sharded_state_dict, is_loading: bool = False, **kwargs):
        fp32 = [isinstance(opt, FP32Optimizer) for opt in self.chained_optimizers]
        for opt, nest in zip(self.chained_optimizers, fp32):
            if nest:
                own = opt.sharded_state_dict
                opt.sharded_state_dict = lambda *a, own=own, **k: {"optimizer": own(*a, **k)}
        try:
            state = super().sharded_state_dict(model_sharded_state_dict, is_loading, **kwargs)
        finally:
            for opt, nest in zip(self.chained_optimizers, fp32):
                if nest:
                    del opt.sharded_state_dict
        if len(fp32) == 1:
            return state["optimizer"] if fp32[0] else state
        return {i: sd["optimizer"] if fp32[i] else sd for i, sd in state.items()}
