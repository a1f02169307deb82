"""Writers of synthetic Megatron-LM and neuronx-distributed logs with known truth.

Each writer simulates a run on a wall clock (launch, init/compile, warm-up, steady steps, one
stall, periodic evaluation and checkpoint saves, a crash, a restart from the last checkpoint
that redoes the steps after it, evaluation reaching a quality target) and returns the truth
it simulated, so tests compare importer + run facts against the simulation's parameters, not
against numbers the code under test produced. Also used by ``benchmarks/``.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from dataclasses import dataclass, field
from pathlib import Path

LAUNCH = dt.datetime(2025, 1, 10, 8, 0, 0)


@dataclass(frozen=True)
class MegatronSpec:
    train_iters: int = 2000
    log_interval: int = 10
    global_batch: int = 256
    seq_length: int = 2048
    step_time_s: float = 1.2
    jitter: float = 0.01
    warmup_step_times_s: tuple[float, ...] = (6.0, 2.5, 1.6)
    """Seconds per iteration of the first intervals after each (re)start."""
    init_s: float = 95.0
    setup_s: float = 30.0
    """Model/optimizer/dataloader build between 'initialized' and the first training step."""
    stall_at: int | None = 700
    stall_s: float = 120.0
    save_interval: int = 500
    save_s: float = 40.0
    eval_interval: int = 250
    eval_s: float = 15.0
    crash_at: int | None = 1230
    restart_downtime_s: float = 300.0
    target_loss: float = 2.2
    timestamps: bool = True
    fraction_digits: bool = True
    seed: int = 7


@dataclass
class Truth:
    init_s: float = 0.0
    steady_step_time_s: float = 0.0
    steady_samples_per_s: float = 0.0
    steady_tokens_per_s: float | None = None
    restarts: int = 0
    redone_steps: int = 0
    stall_s: float = 0.0
    stalls: int = 0
    checkpoint_s: float = 0.0
    eval_s: float = 0.0
    compile_s: float = 0.0
    warmup_steps: int = 0
    target_reached_at_s: float | None = None
    target_step: int | None = None
    end_s: float = 0.0
    final_step: int = 0
    planned_steps: int = 0
    lines: int = 0
    notes: list[str] = field(default_factory=list)


def validation_loss(iteration: int) -> float:
    return 1.8 + 3.0 * math.exp(-iteration / 600.0)


def _stamp(when: dt.datetime, fraction: bool) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S.%f" if fraction else "%Y-%m-%d %H:%M:%S")


def write_megatron(path: Path, spec: MegatronSpec = MegatronSpec()) -> Truth:
    """Write a Megatron-LM log for ``spec`` to ``path``; return what was simulated."""
    lines, truth = simulate_megatron(spec)
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return truth


def megatron_lines(spec: MegatronSpec = MegatronSpec()) -> list[str]:
    return simulate_megatron(spec)[0]


def simulate_megatron(spec: MegatronSpec) -> tuple[list[str], Truth]:
    """The lines of a Megatron-LM log for ``spec`` and what was simulated."""
    rng = random.Random(spec.seed)
    truth = Truth(planned_steps=spec.train_iters)
    truth.steady_step_time_s = spec.step_time_s
    truth.steady_samples_per_s = spec.global_batch / spec.step_time_s
    truth.steady_tokens_per_s = truth.steady_samples_per_s * spec.seq_length
    out: list[str] = []
    clock = 0.0

    def now() -> dt.datetime:
        return LAUNCH + dt.timedelta(seconds=clock)

    def marker(label: str) -> None:
        out.append(f"[{label}] datetime: {now().strftime('%Y-%m-%d %H:%M:%S')} ")

    def start_process(resume_from: int) -> None:
        nonlocal clock
        out.append("using world size: 8, data-parallel size: 8, tensor-model-parallel size: 1")
        out.append("------------------------ arguments ------------------------")
        out.append(f"  global_batch_size ............................... {spec.global_batch}")
        out.append(f"  log_interval .................................... {spec.log_interval}")
        out.append(f"  seq_length ...................................... {spec.seq_length}")
        out.append(f"  train_iters ..................................... {spec.train_iters}")
        out.append("-------------------- end of arguments ---------------------")
        clock += spec.init_s
        out.append(f"time to initialize megatron (seconds): {spec.init_s:.3f}")
        marker("after megatron is initialized")
        if resume_from:
            out.append(f" loading checkpoint from /ckpt at iteration {resume_from}")
            out.append(
                f"  successfully loaded checkpoint from /ckpt [ t 1/1, p 1/1 ] "
                f"at iteration {resume_from}"
            )
        clock += spec.setup_s
        marker("after model, optimizer, and learning rate scheduler are built")
        out.append("training ...")
        marker("before the start of training step")

    start_process(0)
    truth.init_s = spec.init_s + spec.setup_s
    iteration = 0
    consumed = 0
    intervals_since_start = 0
    last_saved = 0
    crashed = False
    while iteration < spec.train_iters:
        first = iteration + 1
        iteration = min(iteration + spec.log_interval, spec.train_iters)
        n = iteration - first + 1
        if intervals_since_start < len(spec.warmup_step_times_s):
            per_iter = spec.warmup_step_times_s[intervals_since_start]
            if not crashed:
                truth.warmup_steps += n
        else:
            per_iter = spec.step_time_s * (1.0 + rng.uniform(-spec.jitter, spec.jitter))
        intervals_since_start += 1
        interval_s = per_iter * n
        if spec.stall_at is not None and first <= spec.stall_at <= iteration and not crashed:
            interval_s += spec.stall_s
            truth.stall_s += spec.stall_s
            truth.stalls += 1
        clock += interval_s
        consumed = iteration * spec.global_batch
        elapsed_ms = interval_s / n * 1000.0
        prefix = f" [{_stamp(now(), spec.fraction_digits)}]" if spec.timestamps else ""
        out.append(
            f"{prefix} iteration {iteration:8d}/{spec.train_iters:8d} | consumed samples: "
            f"{consumed:12d} | elapsed time per iteration (ms): {elapsed_ms:.1f} | "
            f"throughput per GPU (TFLOP/s/GPU): {400.0 * spec.step_time_s / per_iter:.1f} | "
            f"learning rate: {3.0e-4:.6E} | global batch size: {spec.global_batch:5d} | "
            f"lm loss: {validation_loss(iteration) + 0.05:.6E} | loss scale: 1.0 | "
            f"grad norm: 0.812 | number of skipped iterations:   0 | "
            f"number of nan iterations:   0 |"
        )
        if spec.eval_interval and iteration % spec.eval_interval == 0:
            clock += spec.eval_s
            truth.eval_s += spec.eval_s
            loss = validation_loss(iteration)
            out.append("-" * 100)
            out.append(
                f" validation loss at iteration {iteration} on validation set | "
                f"lm loss value: {loss:.6E} | lm loss PPL: {math.exp(loss):.6E} | "
            )
            out.append("-" * 100)
            if loss <= spec.target_loss and truth.target_reached_at_s is None:
                truth.target_reached_at_s = clock
                truth.target_step = iteration
        if spec.save_interval and iteration % spec.save_interval == 0:
            out.append(f"saving checkpoint at iteration {iteration:7d} to /ckpt in torch format")
            clock += spec.save_s
            truth.checkpoint_s += spec.save_s
            out.append(
                f"  successfully saved checkpoint from iteration {iteration:7d} to /ckpt "
                "[ t 1/1, p 1/1 ]"
            )
            out.append("(min, max) time across ranks (ms):")
            out.append(
                f"    save-checkpoint ................................: "
                f"({spec.save_s * 1000 - 3.2:.2f}, {spec.save_s * 1000:.2f})"
            )
            last_saved = iteration
        if spec.crash_at is not None and iteration == spec.crash_at and not crashed:
            crashed = True
            out.append("Traceback (most recent call last):")
            out.append("RuntimeError: NCCL communicator was aborted on rank 3.")
            truth.restarts += 1
            truth.redone_steps += iteration - last_saved
            clock += spec.restart_downtime_s
            start_process(last_saved)
            iteration = last_saved
            intervals_since_start = 0
    marker("after training is done")
    truth.end_s = clock
    truth.final_step = iteration
    truth.lines = len(out)
    return out, truth


@dataclass(frozen=True)
class NxdSpec:
    total_steps: int = 600
    batch: int = 32
    step_time_s: float = 2.0
    warmup_step_times_s: tuple[float, ...] = (30.0, 8.0, 4.0)
    graphs: int = 3
    compile_s_per_graph: float = 40.0
    stall_at: int | None = 300
    stall_s: float = 60.0
    save_interval: int = 100
    crash_at: int | None = 420
    restart_downtime_s: float = 120.0
    seed: int = 11
    seq_len: int = 4096
    states_plan: bool = True
    """Print the script's arguments (plan, batch, sequence length) as the examples do."""
    launch: str | None = None
    """A launcher line to print first (e.g. torchrun's), as a job script that echoes it would."""


def _asctime(when: dt.datetime) -> str:
    return when.strftime("%a %b ") + f"{when.day:2d}" + when.strftime(" %H:%M:%S %Y")


def write_nxd(path: Path, spec: NxdSpec = NxdSpec()) -> Truth:
    """Write a neuronx-distributed training log for ``spec``; return what was simulated."""
    rng = random.Random(spec.seed)
    truth = Truth(planned_steps=spec.total_steps)
    truth.steady_step_time_s = spec.step_time_s
    truth.steady_samples_per_s = spec.batch / spec.step_time_s
    out: list[str] = []
    clock = 0.0

    def compile_graphs(cached: bool) -> None:
        nonlocal clock
        for graph in range(spec.graphs):
            stamp = (LAUNCH + dt.timedelta(seconds=clock)).strftime("%Y-%m-%d %H:%M:%S.%f")
            if cached:
                out.append(
                    f"{stamp}:  4242  INFO ||NCC_WRAPPER||: Using a cached neff at "
                    f"/var/tmp/neuron-compile-cache/MODULE_{graph}/model.neff"
                )
                continue
            out.append(
                f"{stamp}:  4242  INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: "
                f"neuronx-cc compile --framework=XLA /tmp/model_{graph}.hlo_module.pb"
            )
            clock += spec.compile_s_per_graph
            truth.compile_s += spec.compile_s_per_graph
            out.append(".......")
            out.append("Compiler status PASS")

    if spec.launch:
        out.append(spec.launch)
    if spec.states_plan:
        out.append(f"GBS={spec.batch}")
        out.append("MBS=1")
        out.append(f"SEQ_LEN={spec.seq_len}")
        out.append("--------TRAINING CONFIG----------")
        out.append(
            f"Namespace(model_path='./config.json', data_dir='./data', batch_size=1, "
            f"max_steps={spec.total_steps}, steps_this_run=-1, seed=1234, lr=0.00015, "
            f"grad_accum_usteps={spec.batch}, tensor_parallel_size=8, seq_len={spec.seq_len}, "
            f"use_zero_1=True, checkpoint_freq={spec.save_interval})"
        )
    compile_graphs(cached=False)
    truth.init_s = truth.compile_s
    step = 0
    since_start = 0
    last_saved = 0
    crashed = False
    recent: list[float] = []
    while step < spec.total_steps:
        step += 1
        if since_start < len(spec.warmup_step_times_s):
            step_s = spec.warmup_step_times_s[since_start]
            if not crashed:
                truth.warmup_steps += 1
        else:
            step_s = spec.step_time_s * (1.0 + rng.uniform(-0.01, 0.01))
        since_start += 1
        if spec.stall_at is not None and step == spec.stall_at and not crashed:
            step_s += spec.stall_s
            truth.stall_s += spec.stall_s
            truth.stalls += 1
        clock += step_s
        recent = [*recent[-9:], spec.batch / step_s]
        throughput = sum(recent) / len(recent)
        loss = validation_loss(step * 3)
        out.append(
            f"LOG {_asctime(LAUNCH + dt.timedelta(seconds=clock))} - (0, {step}) step_loss : "
            f"{loss:.4f} learning_rate : {1.5e-4:.2e} throughput : {throughput:.2f} seq/s"
        )
        if spec.save_interval and step % spec.save_interval == 0:
            last_saved = step
        if spec.crash_at is not None and step == spec.crash_at and not crashed:
            crashed = True
            out.append("Traceback (most recent call last):")
            out.append("RuntimeError: nrt_execute failed (status 1006)")
            truth.restarts += 1
            truth.redone_steps += step - last_saved
            clock += spec.restart_downtime_s
            compile_graphs(cached=True)
            step = last_saved
            since_start = 0
            recent = []
    truth.end_s = clock
    truth.final_step = step
    Path(path).write_text("\n".join(out) + "\n", encoding="utf-8")
    truth.lines = len(out)
    return truth
