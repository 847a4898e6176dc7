"""The RL trainer, readable top to bottom: set-up, then `run` (warm start, the RL steps,
the summary), then one `rl_step` (rollout -> rewards -> advantages -> old logprobs ->
mini-batch updates -> publish), then evaluation and checkpoints.

Data parallelism: each DP rank samples its own slice of the step's prompts (whole groups),
trains on its responses, and Megatron's DDP averages gradients. TP ranks of one DP rank
sample identically (same seed, gathered logits).
"""
from __future__ import annotations

import logging
import os
from contextlib import nullcontext
from typing import Dict, Optional, Tuple

import torch
from megatron.core import parallel_state
from megatron.core.utils import unwrap_model
from tqdm import tqdm

from ..layers import invalidate_quantized_weights
from ..rl.data import DatasetError, PromptOrder, build_prompts, build_tokenizer, read_rows
from ..rl.data.arithmetic import SYNTHETIC_PREFIX
from ..rl.objectives.advantages import group_normalized_advantages
from ..rl.objectives.aggregation import local_normalizer
from ..rl.objectives.config import PolicyLossConfig
from ..rl.objectives.error_tokens import error_token_metrics
from ..rl.objectives.numerics import masked_mean, reduced_over
from ..rl.objectives.policy_loss import compute_policy_loss
from ..rl.rewards import get_reward
from ..rollout.base import SamplingParams
from ..rollout.embedded.generate import eval_mode
from .batches import collate, micro_batch_rows, select
from ..checkpoint.paths import available_steps, latest_step, resolve
from .checkpointing import (
    load_checkpoint,
    load_model_weights,
    point_tracker_at,
    restore_rng_state,
    rng_state,
    save_checkpoint,
    settings_that_differ,
)
from .distributed import (all_reduce_metrics, data_parallel_sha1, dp_rank_and_size,
                          from_rank_zero, init_distributed, merge_metric)
from .logprobs import response_logprobs
from .lr_schedule import LrSchedule, updates_per_rl_step
from .metrics import MetricsLogger, PhaseTimer, console_line
from .models import build_policy, model_hf_config, model_vocab_rows
from .optimizer import apply_group_settings, build_optimizer, shards_adam_buffers, wrap_ddp
from .rollout_engine import build_rollout_engine
from .updates import optimizer_step
from .warm_start import warm_start

log = logging.getLogger(__name__)

#: what a resume warns of when changed (RLTrainer._recipe); the parallel layout and optimizer
#: are refused instead (checkpointing._check_saved_layout), the model by its config
RECIPE_FLAGS = ("rollout_quant", "aligned_learner", "quant_targets", "loss",
                "mismatch_correction", "loss_agg_mode", "lr", "lr_decay_style", "lr_decay_iters",
                "lr_warmup_iters", "lr_warmup_init", "min_lr", "rollout_temperature",
                "n_samples_per_prompt", "rollout_batch_size", "global_batch_size", "prompt_data",
                "reward", "rollout_routing_replay")


class RLTrainer:
    def __init__(self, args):
        self.args = args
        self.device = init_distributed(args)
        self.is_logger = torch.distributed.get_rank() == 0
        self.tokenizer = build_tokenizer(args.tokenizer_type, args.tokenizer_model)
        self.train_rows = self._prompts(args.prompt_data, args.synthetic_num_prompts, args.seed,
                                        sft_answers=args.sft_iters > 0)
        self.eval_rows = self._held_out_prompts()
        self.order = PromptOrder(len(self.train_rows), args.seed)
        self.reward_fn = get_reward(args.reward)
        # validate() refused the loss flags a run of RL steps would not read
        self.loss_cfg = PolicyLossConfig.from_flags(args, refuse_unread=False)
        self.sampling = SamplingParams(
            args.rollout_temperature, args.rollout_top_p, args.rollout_top_k,
            args.rollout_max_new_tokens, self.tokenizer.stop_ids, args.n_samples_per_prompt)

        vocab = model_vocab_rows(args, self.tokenizer.vocab_size)
        self.hf_config = model_hf_config(args, vocab)
        policy, self.config = build_policy(args, args.learner_quant, vocab, self.device,
                                           keep_operand=args.quant_keep_operand)
        self.model = wrap_ddp(policy, self.config, shards_adam_buffers(args))
        self.engine = build_rollout_engine(args, self.model, self.tokenizer, self.hf_config,
                                           self.device, self._sequence_multiple())
        self.optimizer = self.lr_scheduler = None
        self.step, self.sft_done, self.reward_before = 0, args.sft_iters == 0, None
        self.metrics_mark = None  # where metrics.jsonl stood at the resumed checkpoint
        self.resumed = False
        try:
            if args.load and available_steps(args.load):
                self._resume()
            elif args.pretrained_checkpoint:
                self._start_from_pretrained()
            self.engine.publish_weights(self.model, self.step)
            metrics_path = args.metrics_path or os.path.join(args.save, "metrics.jsonl")
            self.logger = MetricsLogger(metrics_path, enabled=self.is_logger,
                                        wandb_project=args.wandb_project,
                                        wandb_name=args.wandb_exp_name,
                                        wandb_dir=args.wandb_save_dir, config=vars(args),
                                        resume_mark=self.metrics_mark,
                                        resumed=self.resumed, sft_steps=args.sft_iters)
        except BaseException:
            self.engine.shutdown()  # SGLang servers it launched must not outlive the set-up
            raise

    def _sequence_multiple(self) -> int:
        """Under sequence parallelism every forward's length is a multiple of the TP size."""
        return self.args.tensor_model_parallel_size if self.config.sequence_parallel else 1

    def _held_out_prompts(self):
        """--eval-prompt-data's first --eval-num-prompts rows; a synthetic task (that flag's,
        or --prompt-data's when none is given) draws prompts the training set does not hold
        (a separate draw alone put 24 training prompts among the tiny example's 128)."""
        args = self.args
        source = args.eval_prompt_data or args.prompt_data
        count = args.eval_num_prompts
        if not source.startswith(SYNTHETIC_PREFIX):
            return self._prompts(source, count, args.seed + 10_000)[:count] \
                if args.eval_prompt_data else []
        seen = {tuple(r.prompt_ids) for r in self.train_rows}
        rows = []
        for row in self._prompts(source, count + len(seen), args.seed + 10_000):
            if tuple(row.prompt_ids) not in seen:
                seen.add(tuple(row.prompt_ids))
                rows.append(row)
        if len(rows) < count:
            raise DatasetError(
                f"{source}: only {len(rows)} of its prompts are neither trained on nor repeated, "
                f"below --eval-num-prompts {count}; lower it or --synthetic-num-prompts, or "
                f"raise --synthetic-digits")
        return rows[:count]

    def _prompts(self, source, synthetic_rows, seed, sft_answers=False):
        """sft_answers: the warm start trains on these rows' answers (checked up front)."""
        rows = read_rows(source, self.args.prompt_key, self.args.answer_key,
                         synthetic_rows=synthetic_rows,
                         synthetic_digits=self.args.synthetic_digits, seed=seed)
        budget = self.args.seq_length - self.args.rollout_max_new_tokens
        prompts = build_prompts(
            rows, self.args.prompt_template, self.tokenizer, budget, source,
            skip_long=self.args.skip_long_prompts,
            max_answer_tokens=self.args.rollout_max_new_tokens if sft_answers else None)
        if len(prompts) < len(rows) and self.is_logger:
            log.info("%s: %d of %d prompts are over %d tokens and left out (--skip-long-prompts)",
                     source, len(rows) - len(prompts), len(rows), budget)
        return prompts

    # ---------------------------------------------------------------- the run
    def run(self) -> Dict[str, float]:
        args = self.args
        if not self.sft_done:
            self._warm_start()
        # (step, reward) of the last evaluation: evaluate() restores the sampler's state, so
        # the same model gives the same reward, and the final one is not run twice
        evaluated = None
        if self.reward_before is None:
            self.reward_before = self.evaluate()
            evaluated = (self.step, self.reward_before)
            self.logger.log("eval", self.step, {"eval_reward": self.reward_before})
        bar = tqdm(range(self.step + 1, args.train_iters + 1), desc="RL",
                   disable=args.no_progress_bar or not self.is_logger)
        for step in bar:
            metrics = self.rl_step(step)
            self.step = step
            if args.eval_interval and step % args.eval_interval == 0:
                metrics["eval_reward"] = self.evaluate()
                evaluated = (step, metrics["eval_reward"])
            self.logger.log("train", step, metrics)
            if self.is_logger and step % args.log_interval == 0:
                bar.write(console_line(step, metrics))
            # Megatron's --exit-interval: stop at every multiple of it (a resumed run too)
            exiting = bool(args.exit_interval) and step % args.exit_interval == 0 \
                and step < args.train_iters
            done = step == args.train_iters or exiting
            if args.save and (done or (args.save_interval and step % args.save_interval == 0)):
                self.save()
            if exiting:
                self.logger.close()
                return {"exited_at": step}
        reward_after = evaluated[1] if evaluated and evaluated[0] == self.step \
            else self.evaluate()
        self.logger.log("eval", self.step, {"eval_reward": reward_after})
        summary = {"reward_before": self.reward_before, "reward_after": reward_after}
        self.logger.log("summary", self.step, summary)
        self.logger.close()
        return summary

    def _warm_start(self) -> None:
        sft_optimizer, sft_scheduler = build_optimizer(self.args, self.model,
                                                       LrSchedule.for_warm_start(self.args))
        bar = tqdm(total=self.args.sft_iters, desc="warm start (SFT)",
                   disable=self.args.no_progress_bar or not self.is_logger)

        def on_step(it, metrics):
            bar.update()
            bar.set_postfix(loss=f"{metrics['sft_loss']:.3f}")
            self.logger.log("sft", it, metrics)

        warm_start(self.model, sft_optimizer, sft_scheduler, self.train_rows, self.tokenizer,
                   self.args, self.device, self._sequence_multiple(), on_step)
        bar.close()
        self.sft_done = True
        self.engine.publish_weights(self.model, self.step)
        if self.args.save:
            self.save()

    def _rl_optimizer(self):
        """Built after the warm start: a mixed-precision optimizer copies the params at
        construction, and RL starts with fresh Adam moments."""
        if self.optimizer is None:
            self.optimizer, self.lr_scheduler = build_optimizer(self.args, self.model,
                                                                LrSchedule.for_rl(self.args))
        return self.optimizer

    # ---------------------------------------------------------------- one RL step
    def rl_step(self, step: int) -> Dict[str, float]:
        args, timer, tok = self.args, PhaseTimer(), self.tokenizer
        optimizer = self._rl_optimizer()
        indices = self.order.next_indices(args.rollout_batch_size)
        dp_rank, dp = dp_rank_and_size()
        per_rank = args.rollout_batch_size // dp
        rows = [self.train_rows[i] for i in indices[dp_rank * per_rank:(dp_rank + 1) * per_rank]]

        with timer.phase("rollout"):
            groups = self.engine.generate([r.prompt_ids for r in rows], self.sampling)
            self.engine.release_memory()  # colocated engines hand their GPU memory to training
        samples = [s for g in groups for s in g]
        texts = [tok.decode(s.response_ids) for s in samples]
        answers = [r.answer for r in rows for _ in range(args.n_samples_per_prompt)]
        rewards = torch.tensor([self.reward_fn(t, a) for t, a in zip(texts, answers)])
        advantages = group_normalized_advantages(rewards, args.n_samples_per_prompt,
                                                 args.advantage_std_norm)
        batch = collate(samples, advantages, tok.pad_id, self.device,
                        replay_experts=(self.config.num_moe_experts
                                        if args.rollout_routing_replay else None))

        with timer.phase("old_logprobs"), torch.no_grad():
            batch.old_logprobs = self._logprobs(batch)
        with timer.phase("train"):
            train, values = self._train(batch, optimizer)
            train.update(self._diagnostics(batch, values))
        with timer.phase("publish"):
            self.engine.resume_memory()
            self.engine.publish_weights(self.model, step)

        lengths = torch.tensor([float(len(s.response_ids)) for s in samples])
        local = {
            "reward_mean": rewards.mean(), "response_length_mean": lengths.mean(),
            "response_stop_frac": sum(s.finish_reason == "stop" for s in samples) / len(samples),
            **error_token_metrics([s.response_ids for s in samples], tok.decode), **train,
            **timer.metrics(),
            "tokens": sum(len(s.prompt_ids) + len(s.response_ids) for s in samples),
        }
        metrics = all_reduce_metrics({k: float(v) for k, v in local.items()}, self.device)
        tokens = metrics.pop("tokens") * dp  # every rank's own count, summed
        metrics["tokens_per_s"] = tokens / max(sum(timer.seconds.values()), 1e-9)
        metrics["prompt_indices"] = indices
        metrics["rollout_sha1"] = data_parallel_sha1(
            [(s.prompt_ids, s.response_ids) for s in samples])
        return metrics

    def _logprobs(self, batch) -> torch.Tensor:
        """Old logprobs: the aligned learner forward on the rollout's weight version, in eval
        mode as the engine sampled, in micro-batches of --micro-batch-size responses in rollout
        order, or bucketed by length under a token budget (--logprob-max-tokens-per-micro-batch,
        else the training one)."""
        args = self.args
        out = torch.zeros_like(batch.sampler_logprobs)
        count, step = batch.mask.shape[0], args.micro_batch_size
        budget = args.logprob_max_tokens_per_micro_batch or args.max_tokens_per_micro_batch
        parts = (micro_batch_rows(batch.lengths.tolist(), step, budget,
                                  parallel_state.get_data_parallel_group()) if budget else
                 [list(range(start, min(start + step, count))) for start in range(0, count, step)])
        with eval_mode(self.model):
            for rows in parts:
                part = response_logprobs(self.model, select(batch, rows),
                                         args.rollout_temperature, self._sequence_multiple())
                out[rows, :part.shape[1]] = part
        return out

    def _train(self, batch, optimizer) -> Tuple[Dict[str, float], Dict[str, torch.Tensor]]:
        """The step's optimizer updates over the batch: their metrics, and the token values
        (logprobs, entropy) each row had in the update that trained it."""
        args, cfg = self.args, self.loss_cfg
        _, dp = dp_rank_and_size()
        per_update = args.global_batch_size // dp
        order = torch.randperm(batch.mask.shape[0]).tolist()

        def loss_fn(micro, normalizer):
            logprobs, entropy = response_logprobs(
                self.model, micro, args.rollout_temperature, self._sequence_multiple(),
                with_entropy=True)
            loss, _ = compute_policy_loss(
                cfg, logprobs, micro.old_logprobs, micro.advantages, micro.mask,
                micro.sampler_logprobs, normalizer=normalizer)
            return loss, {"logprobs": logprobs.detach(), "entropy": entropy}

        merged: Dict[str, float] = {}
        values: Dict[str, torch.Tensor] = {}  # the step's token values, row by row
        updates = [order[i:i + per_update] for i in range(0, len(order), per_update)]
        for rows in updates:
            metrics, update_values = optimizer_step(
                self.model, optimizer, batch, rows, scheduler=self.lr_scheduler,
                micro_batch_size=args.micro_batch_size,
                max_tokens=args.max_tokens_per_micro_batch, loss_fn=loss_fn,
                normalizer=lambda mask: local_normalizer(mask, cfg.loss_agg_mode),
                loss_name="pg_loss")
            for k, v in metrics.items():
                merged[k] = merge_metric(k, merged.get(k), v, len(updates))
            for key, value in update_values.items():
                if key not in values:
                    values[key] = value.new_zeros(batch.mask.shape)
                values[key][rows, :value.shape[1]] = value
        return merged, values

    def _diagnostics(self, batch, values) -> Dict[str, float]:
        """The objective's metrics (ratios, clip and mask fractions, mismatch, entropy) once
        over the step's batch of every data-parallel rank, each row with its values from the
        update that trained it: means over all the step's tokens and sequences, not means of
        updates' or ranks' means (ranks hold as many sequences, not as many tokens). Every
        rank gets the same values (numerics.reduced_over: sums, counts and extremes
        all-reduced)."""
        over_ranks = (reduced_over(parallel_state.get_data_parallel_group())
                      if dp_rank_and_size()[1] > 1 else nullcontext())
        with torch.no_grad(), over_ranks:
            _, diagnostics = compute_policy_loss(
                self.loss_cfg, values["logprobs"], batch.old_logprobs, batch.advantages,
                batch.mask, batch.sampler_logprobs)
            diagnostics["entropy"] = masked_mean(values["entropy"], batch.mask)
            diagnostics["sampler_logprob_mean"] = masked_mean(batch.sampler_logprobs, batch.mask)
        diagnostics.pop("pg_loss")  # the trained loss is optimizer_step's
        return dict(zip(diagnostics, torch.stack(
            [v.double() for v in diagnostics.values()]).tolist()))

    # ---------------------------------------------------------------- evaluation
    def evaluate(self) -> float:
        """Mean reward over every sample of the held-out prompts (`eval_sampling`), whose rows
        the DP ranks share out.

        Restores the engine's sampler state so evaluating never shifts the training samples."""
        if not self.eval_rows:
            return float("nan")
        dp_rank, dp = dp_rank_and_size()
        rows = self.eval_rows[dp_rank::dp]  # shares may differ: EP ranks still decode in step
        saved = self.engine.state_dict()
        try:
            groups = self.engine.generate([r.prompt_ids for r in rows],
                                          eval_sampling(self.args, self.tokenizer.stop_ids))
        finally:
            self.engine.load_state_dict(saved)
        rewards = [self.reward_fn(self.tokenizer.decode(s.response_ids), r.answer)
                   for g, r in zip(groups, rows) for s in g]
        mean = all_reduce_metrics({"sum": sum(rewards), "count": len(rewards)}, self.device)
        return mean["sum"] / mean["count"]

    # ---------------------------------------------------------------- checkpoints
    def save(self) -> None:
        rl_state = {"step": self.step, "order": self.order.state_dict(),
                    "sft_done": self.sft_done, "reward_before": self.reward_before,
                    "metrics_mark": from_rank_zero(self.logger.mark()),  # the logging rank's
                    "layout": self._layout(), "recipe": self._recipe()}
        rng = rng_state({"engine": self.engine.state_dict()})
        optimizer = self.optimizer if self.step > 0 else None
        save_checkpoint(self.args.save, self.step, unwrap_model(self.model), optimizer,
                        rl_state, rng, self.hf_config,
                        self.args.tokenizer_model if self.args.tokenizer_type == "hf" else None)

    def _layout(self, with_optimizer: bool = True) -> Dict[str, object]:
        """What a resume needs unchanged: the optimizer state and RNG shards follow it (a
        warm start's step 0 holds no optimizer state: any optimizer may go on from it)."""
        optimizer = {"--optimizer": self.args.optimizer,
                     "--use-distributed-optimizer": bool(self.args.use_distributed_optimizer)}
        return {"--tensor-model-parallel-size":
                parallel_state.get_tensor_model_parallel_world_size(),
                "--expert-model-parallel-size":
                parallel_state.get_expert_model_parallel_world_size(),
                "--expert-tensor-parallel-size":
                parallel_state.get_expert_tensor_parallel_world_size(),
                "data-parallel size (processes / TP)": dp_rank_and_size()[1],
                **(optimizer if with_optimizer else {})}

    def _rewind_tracker(self, step: int) -> None:
        """--ckpt-step k into its own folder goes on from k: the tracker names k at once, so
        a run stopped before its first save resumes from k, not from the checkpoint the
        tracker named (a later one, kept until this run saves its step, or an earlier one)
        against a metrics file cut to k."""
        args = self.args
        if (args.ckpt_step is None or args.save is None or step == latest_step(args.load)
                or os.path.realpath(args.save) != os.path.realpath(args.load)):
            return
        if self.is_logger:  # global rank 0, which writes the tracker at saves too
            point_tracker_at(args.load, step)
            log.info("rewound %s to step %d: its tracker names it; the later checkpoints stay "
                     "until this run saves their steps", args.load, step)

    def _recipe(self) -> Dict[str, object]:
        """The flags that make a run the experiment it is: a resume with others goes on as
        another one in the same folder and metrics file, so it is said."""
        return {f"--{name.replace('_', '-')}": getattr(self.args, name) for name in RECIPE_FLAGS}

    def _warn_of_another_recipe(self, saved: Optional[Dict[str, object]]) -> None:
        differ = settings_that_differ(saved, self._recipe())
        if differ and self.is_logger:
            log.warning("resuming %s with flags other than its run's: %s. The run goes on "
                        "as another experiment from here; pass a new --save (with "
                        "--pretrained-checkpoint) to keep the two apart", self.args.load,
                        "; ".join(differ))

    def _start_from_pretrained(self) -> None:
        folder = resolve(self.args.pretrained_checkpoint)
        load_model_weights(folder, unwrap_model(self.model), self.hf_config)
        invalidate_quantized_weights(self.model)
        if self.is_logger:
            log.info("starting from the model weights of %s", folder)

    def _resume(self) -> None:
        step = self.args.ckpt_step
        step = latest_step(self.args.load) if step is None else step
        optimizer = self._rl_optimizer() if step > 0 else None
        step, rl_state, rng = load_checkpoint(self.args.load, step,
                                              unwrap_model(self.model), optimizer,
                                              self.hf_config, self._layout(step > 0))
        if optimizer is not None:  # the schedule goes on from the step (U updates a step)
            self.lr_scheduler = apply_group_settings(
                optimizer, LrSchedule.for_rl(self.args), self.args,
                updates_done=step * updates_per_rl_step(self.args))
        invalidate_quantized_weights(self.model)
        self.step, self.sft_done = step, rl_state["sft_done"]
        self.reward_before = rl_state["reward_before"]
        self.metrics_mark = rl_state.get("metrics_mark")  # absent before 2026-12-01
        self.resumed = True
        if step > 0:  # a warm start's step 0 starts any recipe (examples/tiny/train.sh)
            self._warn_of_another_recipe(rl_state.get("recipe"))  # absent before session 73
        self._rewind_tracker(step)
        self.order.load_state_dict(rl_state["order"])
        restore_rng_state(rng)
        self.engine.load_state_dict(rng["engine"])
        if self.is_logger:  # a re-run into the same --save resumes; say so before any work
            done = " (finished: raise --train-iters to go on, or pass a new --save)" \
                if step >= self.args.train_iters else ""
            log.info("resumed from %s at step %d of --train-iters %d%s", self.args.load, step,
                     self.args.train_iters, done)


def eval_sampling(args, stop_ids: tuple) -> SamplingParams:
    """Greedy (top-k 1) at --eval-temperature 0, else sampled; --eval-samples-per-prompt each."""
    if args.eval_temperature == 0:
        return SamplingParams(1.0, 1.0, 1, args.rollout_max_new_tokens, stop_ids, 1)
    return SamplingParams(args.eval_temperature, args.eval_top_p, -1,
                          args.rollout_max_new_tokens, stop_ids, args.eval_samples_per_prompt)


def eval_label(args) -> str:
    """How the held-out reward was measured, for the run's last lines."""
    if args.eval_temperature == 0:
        return "greedy"
    samples = args.eval_samples_per_prompt
    return (f"temperature {args.eval_temperature:g}, top-p {args.eval_top_p:g}, mean of "
            f"{samples} sample{'s' * (samples > 1)}")
