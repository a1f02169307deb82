"""Make the framework samples in this folder by running the real libraries on CPU.

Run by hand, never by the tests (torch is no test dependency): in a virtual environment with
torch, transformers, lightning and tensorboard installed (the versions used are in README.md),

    python tests/data/frameworks/make_samples.py OUT_DIR

Each job runs in a child process whose standard output and error go to one file, as a batch
scheduler captures a job (tqdm redraws its bar with carriage returns; nothing is a terminal).
A job that crashes and is resumed appends its second attempt to the same file, as
``tee -a`` or a scheduler's requeue does. The model is a small GPT-2 built from its config
(no download) trained on random tokens: the formats, clocks and counts are what matter.

Jobs:

- ``hf/trainer.log`` (+ its TensorBoard folder): the Hugging Face ``Trainer`` with
  ``log_level="info"``, 200 steps, evaluation and checkpoints every 40 steps, TensorBoard
  reporting, and ``include_num_input_tokens_seen`` (token counts in the logged dicts).
- ``hf/trainer_resume.log`` (+ its TensorBoard folders, one per attempt): the same without
  token counts; the first attempt crashes after step 130, the second resumes from
  ``checkpoint-120`` and finishes the 200 steps.
- ``hf/trainer_neuron.log``: the same ``Trainer`` run once, with a callback that prints the
  Neuron compiler wrapper's lines where a Trainium run prints them (the first training step
  and the first evaluation compile their graphs; later ones hit the cache) and waits as long as
  the compile takes. The Trainer's own output is real; the compiler lines are emulated in the
  wrapper's format (the Neuron SDK does not run on this machine).
- ``lightning/fit.log`` (+ ``lightning/tb/``): a Lightning ``Trainer`` with its tqdm
  progress bar, a validation loop each epoch, ``ModelCheckpoint(verbose=True)`` and
  ``TensorBoardLogger``; metrics logged as NeMo's GPT model logs them (``reduced_train_loss``,
  ``lr``, ``global_step``, ``consumed_samples``, ``val_loss``).
- ``hf/trainer_resume_same_dir.log`` (+ ``hf-resume-same-dir/tb/``): the resumed ``Trainer``
  run again, with ``TENSORBOARD_LOGGING_DIR`` set as a job script sets it, so both attempts
  write their event files into one folder; the first attempt crashes after step 135 (step 130
  logged), the second resumes from ``checkpoint-120`` and logs step 130 again.
- ``lightning/fit_resume.log`` (+ ``lightning-resume/tb/gpt/version_0/``): the Lightning run
  with a fixed logger version (as NeMo's experiment manager keeps one log folder when it
  resumes) and a checkpoint every 50 steps; the first attempt crashes after step 75, the second
  resumes from the step-50 checkpoint (``ckpt_path``), so the second event file's steps go
  back.
- ``nemo/progress_printer.log``: NeMo 2's ``ProgressPrinter`` (what NeMo's ``MegatronStrategy``
  puts in place of the tqdm bar with NeMo's own ``fix_progress_bar``, called here as the
  strategy calls it, ``progress_interval=1`` by default) and NeMo's
  ``TimingCallback`` (``train_step_timing in s``) on a Lightning fit of 100 steps of 8
  samples, a validation of 4 batches every 50 steps; the module logs what NeMo's strategy
  and data sampler log (``reduced_train_loss``, ``global_step``, ``consumed_samples``,
  ``global_batch_size``). MegatronStrategy itself needs GPUs and Megatron's process groups:
  a CPU strategy stands in, giving the printer the one value it reads from the strategy,
  ``current_epoch_step``, computed as NeMo's own FSDP strategies compute it; Megatron's
  micro-batch calculator is initialised as NeMo initialises it (one micro-batch a step);
  NeMo 2.3.1's ``exp_manager`` (``TimingCallback``'s module) imports Lightning's
  ``NeptuneLogger``, which Lightning 2.6 no longer has: an unused stand-in is set first.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

SEQ_LEN = 128
VOCAB = 512


def _tiny_gpt2():  # type: ignore[no-untyped-def]
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=VOCAB, n_positions=SEQ_LEN, n_embd=256, n_layer=4, n_head=4)
    return GPT2LMHeadModel(config)


class _Tokens:
    """Random token sequences, a fixed number of them (a map-style dataset)."""

    def __init__(self, count: int, seed: int) -> None:
        import torch

        generator = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(0, VOCAB, (count, SEQ_LEN), generator=generator)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index: int) -> dict[str, object]:
        ids = self.ids[index]
        return {"input_ids": ids, "labels": ids}


def _hf_job(out: str, crash_after: int | None, resume: bool, neuron: bool, tokens: bool) -> None:
    import torch
    from transformers import Trainer, TrainerCallback, TrainingArguments

    torch.manual_seed(0)
    torch.set_num_threads(1)

    class Crash(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            if crash_after is not None and state.global_step >= crash_after:
                raise RuntimeError(f"simulated node failure after step {state.global_step}")

    class NeuronCompiler(TrainerCallback):
        """Prints what the Neuron compiler wrapper prints where a Trainium run compiles."""

        def __init__(self) -> None:
            self.graphs = 0
            self.evaluated = False

        def _compile(self, seconds: float, cached: bool) -> None:
            self.graphs += 1
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            micro = f"{int(time.time() * 1e6) % 1_000_000:06d}"
            pid = os.getpid()
            module = f"MODULE_{1000 + self.graphs}+4a1c2b7e"
            if cached:
                print(
                    f"{stamp}.{micro}:  {pid}  INFO ||NEURON_CC_WRAPPER||: Using a cached neff "
                    f"at /var/tmp/neuron-compile-cache/neuronxcc-2.15.128.0+56dc5a86/{module}/"
                    "model.neff. Exiting with a successfully compiled graph.",
                    flush=True,
                )
                return
            print(
                f"{stamp}.{micro}:  {pid}  INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: "
                "neuronx-cc compile --target=trn1 --framework=XLA "
                f"/tmp/ubuntu/neuroncc_compile_workdir/{module}.hlo_module.pb --output "
                f"/tmp/ubuntu/neuroncc_compile_workdir/{module}.neff --model-type=transformer "
                "--verbose=35",
                flush=True,
            )
            for _ in range(int(seconds)):
                time.sleep(1.0)
                print(".", end="", flush=True)
            print("\nCompiler status PASS", flush=True)

        def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            if state.global_step == 1:
                self._compile(25.0, cached=False)
            elif state.global_step == 2:
                self._compile(12.0, cached=False)
            elif state.global_step in (40, 80):
                self._compile(0.0, cached=True)

        def on_prediction_step(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            if state.global_step == 40 and not self.evaluated:
                self.evaluated = True  # the evaluation graph, compiled in its first batch
                self._compile(8.0, cached=False)

    args = TrainingArguments(
        output_dir=out,
        max_steps=200,
        per_device_train_batch_size=8,
        per_device_eval_batch_size=8,
        learning_rate=5e-4,
        warmup_steps=10,
        logging_steps=10,
        eval_strategy="steps",
        eval_steps=40,
        save_strategy="steps",
        save_steps=40,
        report_to=["tensorboard"] if not neuron else [],
        log_level="info",
        use_cpu=True,
        seed=0,
        dataloader_num_workers=0,
        include_num_input_tokens_seen="all" if tokens else "no",
    )
    trainer = Trainer(
        model=_tiny_gpt2(),
        args=args,
        train_dataset=_Tokens(1000, seed=1),
        eval_dataset=_Tokens(96, seed=2),
        callbacks=[NeuronCompiler()] if neuron else [Crash()],
    )
    trainer.train(resume_from_checkpoint=True if resume else None)


def _lightning_job(out: str, crash_after: int | None = None, resume: bool = False) -> None:
    import lightning as L
    import torch
    from lightning.pytorch.callbacks import ModelCheckpoint, TQDMProgressBar
    from lightning.pytorch.loggers import TensorBoardLogger
    from torch.utils.data import DataLoader

    torch.manual_seed(0)
    torch.set_num_threads(1)
    batch = 8

    class Crash(L.Callback):
        def on_train_batch_end(self, trainer, *args):  # type: ignore[no-untyped-def]
            if crash_after is not None and trainer.global_step >= crash_after:
                raise RuntimeError(f"simulated node failure after step {trainer.global_step}")

    class Module(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.model = _tiny_gpt2()

        def training_step(self, data, index):  # type: ignore[no-untyped-def]
            loss = self.model(**data).loss
            step = self.trainer.global_step
            self.log("reduced_train_loss", loss, prog_bar=True)
            self.log("lr", self.optimizers().param_groups[0]["lr"], prog_bar=True)
            self.log("global_step", float(step), prog_bar=True)
            self.log("consumed_samples", float(step * batch), prog_bar=True)
            return loss

        def validation_step(self, data, index):  # type: ignore[no-untyped-def]
            self.log("val_loss", self.model(**data).loss, prog_bar=True)

        def configure_optimizers(self):  # type: ignore[no-untyped-def]
            return torch.optim.AdamW(self.parameters(), lr=5e-4)

    resumable = crash_after is not None or resume
    checkpoint = (
        ModelCheckpoint(dirpath=os.path.join(out, "ckpt"), every_n_train_steps=50, save_top_k=-1)
        if resumable
        else ModelCheckpoint(dirpath=os.path.join(out, "ckpt"), monitor="val_loss", verbose=True)
    )
    trainer = L.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=3,
        log_every_n_steps=10,
        # a fixed version: the resumed attempt writes into the first one's folder
        logger=TensorBoardLogger(
            os.path.join(out, "tb"), name="gpt", version=0 if resumable else None
        ),
        # the tqdm bar, as NeMo and NxD Training configure it (with rich installed Lightning
        # would pick its rich bar, which prints nothing to a file)
        callbacks=[TQDMProgressBar(), checkpoint, Crash()],
    )
    train = DataLoader(_Tokens(480, seed=1), batch_size=batch)
    val = DataLoader(_Tokens(64, seed=2), batch_size=batch)
    ckpt = None
    if resume:
        (ckpt,) = [
            os.path.join(out, "ckpt", name)
            for name in os.listdir(os.path.join(out, "ckpt"))
            if name.endswith("step=50.ckpt")
        ]
    trainer.fit(Module(), train, val, ckpt_path=ckpt)


def _nemo_printer_job(out: str) -> None:
    import lightning.pytorch as pl
    import lightning.pytorch.loggers as loggers
    import torch
    from lightning.pytorch.callbacks import TQDMProgressBar
    from lightning.pytorch.strategies import SingleDeviceStrategy
    from megatron.core.num_microbatches_calculator import init_num_microbatches_calculator
    from nemo.lightning.pytorch.callbacks.progress_printer import ProgressPrinter
    from nemo.lightning.pytorch.strategies.utils import fix_progress_bar

    if not hasattr(loggers, "NeptuneLogger"):
        # nemo 2.3.1's exp_manager imports it; lightning 2.6 dropped it (never used here)
        loggers.NeptuneLogger = type("NeptuneLogger", (), {})  # type: ignore[attr-defined]
    from nemo.utils.exp_manager import TimingCallback
    from torch.utils.data import DataLoader

    torch.manual_seed(0)
    torch.set_num_threads(1)
    batch = 8
    init_num_microbatches_calculator(0, None, batch, batch, 1)

    class Strategy(SingleDeviceStrategy):
        @property
        def current_epoch_step(self) -> int:  # as nemo's fsdp_strategy.py computes it
            loop = self.lightning_module.trainer.fit_loop.epoch_loop
            return max(
                loop.automatic_optimization.optim_progress.optimizer.step.current.completed,
                loop.manual_optimization.optim_step_progress.current.completed,
            )

    class Module(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.model = _tiny_gpt2()

        def training_step(self, data, index):  # type: ignore[no-untyped-def]
            loss = self.model(**data).loss
            step = self.trainer.global_step
            self.log("lr", self.optimizers().param_groups[0]["lr"], prog_bar=True, batch_size=1)
            self.log("global_batch_size", float(batch), prog_bar=True, batch_size=1)
            self.log("global_step", float(step), prog_bar=True, batch_size=1)
            self.log("reduced_train_loss", loss, prog_bar=True, batch_size=1)
            self.log("consumed_samples", float((step + 1) * batch), prog_bar=True, batch_size=1)
            return loss

        def validation_step(self, data, index):  # type: ignore[no-untyped-def]
            self.log("val_loss", self.model(**data).loss, prog_bar=True, batch_size=1)

        def configure_optimizers(self):  # type: ignore[no-untyped-def]
            return torch.optim.AdamW(self.parameters(), lr=5e-4)

    trainer = pl.Trainer(
        strategy=Strategy(device=torch.device("cpu")),
        max_steps=100,
        val_check_interval=50,
        limit_val_batches=4,
        num_sanity_val_steps=0,
        logger=False,
        enable_checkpointing=False,
        # NeMo's recipes add TimingCallback; the tqdm bar comes after the user's callbacks, as
        # Lightning adds its default bar (named here: with rich installed it would pick rich's)
        callbacks=[TimingCallback(), TQDMProgressBar()],
    )
    # what MegatronStrategy's setup does: Lightning's default tqdm bar (added after the
    # user's callbacks) replaced in place by a ProgressPrinter(progress_interval=1)
    fix_progress_bar(trainer, True, 1)
    assert any(isinstance(callback, ProgressPrinter) for callback in trainer.callbacks)
    train = DataLoader(_Tokens(1000, seed=1), batch_size=batch)
    val = DataLoader(_Tokens(64, seed=2), batch_size=batch)
    trainer.fit(Module(), train, val)


def _run(log: Path, *job: str, append: bool = False, env: dict[str, str] | None = None) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab" if append else "wb") as handle:
        subprocess.run(
            [sys.executable, __file__, "--job", *job],
            stdout=handle,
            stderr=subprocess.STDOUT,
            check=False,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "TQDM_DISABLE": "", **(env or {})},
        )


def main() -> None:
    if sys.argv[1] == "--job":
        kind, out, *rest = sys.argv[2:]
        if kind == "hf":
            crash, resume, neuron, tokens = rest
            crash_after = int(crash) if crash != "-" else None
            _hf_job(out, crash_after, resume == "1", neuron == "1", tokens == "1")
        elif kind == "nemo-printer":
            _nemo_printer_job(out)
        elif kind == "lightning":
            crash, resume = rest or ["-", "0"]
            _lightning_job(out, int(crash) if crash != "-" else None, resume == "1")
        return
    out = Path(sys.argv[1])
    which = set(sys.argv[2:]) or {
        "plain",
        "resume",
        "neuron",
        "lightning",
        "resume-same-dir",
        "lightning-resume",
        "nemo-printer",
    }
    if "plain" in which:
        work = out / "hf-plain"
        _run(out / "hf" / "trainer.log", "hf", str(work), "-", "0", "0", "1")
    if "resume" in which:
        work = out / "hf-resume"
        log = out / "hf" / "trainer_resume.log"
        _run(log, "hf", str(work), "130", "0", "0", "0")
        _run(log, "hf", str(work), "-", "1", "0", "0", append=True)
    if "neuron" in which:
        work = out / "hf-neuron"
        _run(out / "hf" / "trainer_neuron.log", "hf", str(work), "-", "0", "1", "0")
    if "lightning" in which:
        work = out / "lightning"
        _run(work / "fit.log", "lightning", str(work))
    if "resume-same-dir" in which:
        work = out / "hf-resume-same-dir"
        log = out / "hf" / "trainer_resume_same_dir.log"
        env = {"TENSORBOARD_LOGGING_DIR": str(work / "tb")}
        _run(log, "hf", str(work), "135", "0", "0", "0", env=env)
        _run(log, "hf", str(work), "-", "1", "0", "0", append=True, env=env)
    if "lightning-resume" in which:
        work = out / "lightning-resume"
        log = out / "lightning" / "fit_resume.log"
        _run(log, "lightning", str(work), "75", "0")
        _run(log, "lightning", str(work), "-", "1", append=True)
    if "nemo-printer" in which:
        _run(out / "nemo" / "progress_printer.log", "nemo-printer", str(out / "nemo-printer"))


if __name__ == "__main__":
    main()
