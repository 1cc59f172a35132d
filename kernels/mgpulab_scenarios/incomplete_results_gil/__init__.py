"""Scenario 4 — "DataParallel returns incomplete results" / the GIL (seed 002).

The scenario as data: parameters, steps with their templated cells, experiments and claims.
What each cell's recording becomes is in :mod:`.evidence`, each claim's verdict in :mod:`.verdicts`.
"""
from __future__ import annotations

from ..core import PLACEMENT, Cell, Claim, Experiment, Parameter, Scenario, Step, at_most_devices, load_template
from .evidence import e_completeness, e_overhead, e_backward, e_data_wait
from .verdicts import (v_incomplete, v_loss, v_gil, v_ddp_gil, v_no_improvement, v_python_grows, v_large_batches,
                       v_backward_sequential, v_gil_concurrency, v_aggregation, v_data, v_workers)

SOURCE = "002_e762a3f4f8bd6399.txt"
SOURCE_TITLE = "Why is DataParallel returning incomplete results?"  # the article's own title, shown with the file name as a detail

PARAMETERS = (
    Parameter("devices", "int", 2, "devices for DataParallel / DDP ranks: GPUs (shared when fewer than this), "
              "or emulated CPU devices", 1, 8),
    PLACEMENT,
    Parameter("samples", "int", 2000, "dataset rows (article: 10000)", 10, 20000),
    Parameter("batch_size", "int", 250, "DataLoader batch size (article: 1000), and the batch of the timing "
              "experiments", 1, 5000),
    Parameter("epochs", "int", 1, "epochs over the dataset (article: 10)", 1, 10),
    Parameter("lr", "float", 0.01, "SGD learning rate (article: 0.01)", 1e-5, 1.0),
    Parameter("forward_kind", "choice", "python", "python: many tiny layers (Python/dispatch-bound forward); "
              "tensor: two wide layers (arithmetic-bound forward)", choices=("python", "tensor")),
    Parameter("depth", "int", 40, "layers of the Python-heavy model", 1, 400),
    Parameter("repeats", "int", 5, "timed forwards (or steps) per variant after a warm-up; timing verdicts need "
              "3 or more to see their spread", 2, 50),
    Parameter("num_workers", "int", 2, "DataLoader workers for the data-wait comparison (vs 0)", 0, 4),
    Parameter("sample_cost_ms", "float", 0.3, "emulated per-sample loading cost (I/O wait) in the dataset", 0.0, 10.0),
    Parameter("seed", "int", 0, "seed for data and weights", 0, 2 ** 31 - 1),
)


COMPLETE_CELL = load_template("incomplete_results_gil_completeness")

OVERHEAD_CELL = load_template("incomplete_results_gil_python_overhead")

DATA_CELL = load_template("incomplete_results_gil_data_wait")

BACKWARD_CELL = load_template("incomplete_results_gil_backward")

STEPS = (
    Step("completeness", "**Are DataParallel's results incomplete?** Run the article's Example 1 on one device and "
         "on DataParallel at the same seed and count the output rows that come back, check they are finite, and "
         "compare the loss step by step.",
         (Cell("completeness", COMPLETE_CELL),),
         "What fraction of the outputs does DataParallel return?", ("100%", "less than 100%"),
         ("incomplete", "loss-irregular"),
         tells=(("rows all returned",), ("missing rows", "dropped rows", "lost rows")),
         explanation="**Why.** DataParallel's gather concatenates the outputs of every replica on device 0, in "
                     "chunk order: a replica that returned fewer rows would make the gather fail, not shrink "
                     "the result. So the place to look for the article's \"incomplete results\" is the row "
                     "count and the loss curve above, side by side with one device's."),
    Step("python-overhead", "**What the GIL really costs.** Compare the forward time of a Python-heavy model on "
         "one device, on DataParallel and on DDP, and DataParallel's against one device's at 1, 8 and 64 times "
         "the batch.",
         (Cell("python-overhead", OVERHEAD_CELL),),
         "How does DataParallel's forward time compare with one device for a Python-heavy model?",
         ("faster", "same", "slower, growing with the number of devices"),
         ("gil-restricts", "ddp-avoids-gil", "no-improvement", "python-grows", "large-batches"),
         tells=(("speeds up", "quicker"), ("no difference", "unchanged"), ("serialized", "contention")),
         explanation="**Why.** DataParallel's replicas run on Python threads of one process: their device work "
                     "can overlap, but their Python (module calls, dispatch) is serialized by the GIL. DDP ranks "
                     "are processes with their own interpreters."),
    Step("backward", "**Backward and optimizer.step across devices.** Time each replica's backward (when autograd "
         "computes the gradients of its parameters, and on which thread) and see where optimizer.step runs.",
         (Cell("backward", BACKWARD_CELL),),
         "Do the replicas' backward passes run one after another?", ("yes, in turn", "no, side by side"),
         ("backward-sequential", "gil-prevents-concurrency", "aggregation-bottleneck"),
         tells=(("sequential",), ("concurrent", "overlap", "parallel")),
         explanation="**Why.** Autograd runs a backward on one worker thread per device: separate GPUs each get "
                     "their own and can overlap, while emulated CPU devices (or virtual devices sharing one "
                     "GPU) share one worker, so their replicas' backward passes take turns. `optimizer.step()` "
                     "then runs once, on the one model's parameters on the first device: it is not spread over "
                     "the devices at all."),
    Step("data-wait", "**DataLoader workers (Example 2).** Each step first waits for its batch. Measure the share "
         "of the step spent waiting for data with `num_workers=0` and with more workers.",
         (Cell("data-wait", DATA_CELL),),
         "With num_workers=0, is the step dominated by data waiting?", ("yes", "no"),
         ("data-bottleneck", "num-workers"),
         tells=(("bottleneck", "mostly waiting"), ("mostly compute", "compute dominates")),
         explanation="**Why.** With `num_workers=0` the training loop loads every batch itself, so each step "
                     "first pays its samples' loading cost; workers load the next batches in other processes "
                     "while the step computes. Whether waiting dominates is loading cost against compute, "
                     "and either way every row arrives: a slow loader makes training slower, not incomplete."),
)


EXPERIMENTS = (
    Experiment("completeness", "Output completeness and loss parity: 1 device vs DataParallel xN",
               ("1 device", "DataParallel xN"), metrics=("loss",), chart="line: loss per step",
               evidence=e_completeness),
    Experiment("python-overhead", "Python overhead per device: 1 device vs DataParallel threads vs DDP processes",
               ("1 device", "DataParallel xN", "DDP xN"), metrics=("forward_ms",), chart="bar: forward ms",
               evidence=e_overhead),
    Experiment("backward", "Each replica's backward and the optimizer step: when, and on which thread",
               ("DataParallel xN",), metrics=("backward_ms", "optimizer_ms"), chart="bar: step phases",
               evidence=e_backward),
    Experiment("data-wait", "Data-wait share of each step: num_workers=0 vs num_workers=N",
               ("num_workers=0", "num_workers=N"), metrics=("data_ms", "step_ms"),
               chart="stacked bar: data wait vs compute", evidence=e_data_wait),
)

CLAIMS = (
    Claim("incomplete", "This bottleneck manifests as incomplete processing, particularly when the computational "
          "load on the GPUs is significantly less than the communication and synchronization demands.",
          "completeness", v_incomplete),
    Claim("loss-irregular", "Incomplete results might manifest as unexpectedly high loss values, inconsistent "
          "training progress, or even silent failures.", "completeness", v_loss),
    Claim("gil-restricts", "While seemingly offering a straightforward approach to parallelization, DataParallel's "
          "reliance on the GIL significantly restricts true parallelism for computationally intensive operations "
          "within Python itself.", "python-overhead", v_gil),
    Claim("ddp-avoids-gil", "DDP avoids the GIL bottleneck by using the `nccl` backend (or other appropriate backends "
          "depending on the hardware), enabling efficient communication and gradient aggregation across multiple "
          "GPUs without the serialization imposed by the GIL.", "python-overhead", v_ddp_gil),
    Claim("no-improvement", "Consequently, the theoretical speedup achievable with multiple GPUs is far from realized, "
          "often leading to situations where using DataParallel provides minimal or no improvement compared to "
          "single-GPU training, and in some cases, even degraded performance due to the communication overhead "
          "outweighing any benefit from parallelism.", "python-overhead", v_no_improvement),
    Claim("python-grows", "The time spent in Python code –  handling data transfers, calculating loss, and updating "
          "model parameters – grows disproportionately.", "python-overhead", v_python_grows),
    Claim("large-batches", "This effect is especially pronounced with complex models or large batch sizes.",
          "python-overhead", v_large_batches),
    Claim("backward-sequential", "Observe how the `loss.backward()` and `optimizer.step()` calls (both involving "
          "substantial Python operations) are sequentially executed across the GPUs, despite the forward pass being "
          "potentially parallelized.", "backward", v_backward_sequential),
    Claim("gil-prevents-concurrency", "The GIL prevents true concurrency during these steps.", "backward",
          v_gil_concurrency),
    Claim("aggregation-bottleneck", "While the computation on the GPUs is genuinely parallelized, the synchronization "
          "and communication overhead (including gradient aggregation and parameter updates) are often bottlenecked "
          "by the GIL.", "backward", v_aggregation),
    Claim("data-bottleneck", "This can lead to data loading becoming a bottleneck, preventing the GPUs from being "
          "fully utilized and again resulting in incomplete results.", "data-wait", v_data),
    Claim("num-workers", "Multiple `num_workers` should be experimented with to optimize the balance between data "
          "loading and GPU processing.", "data-wait", v_workers),
)

SCENARIO = Scenario(
    id="incomplete-results-gil", title="Incomplete results? DataParallel and the GIL", source=SOURCE, source_title=SOURCE_TITLE,
    summary="Test the claim: output completeness and loss parity vs one device; Python overhead per device on "
            "threads vs DDP processes; DataLoader num_workers and the data-wait share of each step.",
    parameters=PARAMETERS, steps=STEPS, experiments=EXPERIMENTS, claims=CLAIMS,
    constraints=(at_most_devices("devices"),),
    # What each choice of a step's question is, in verdicts (see Scenario.outcomes).
    outcomes={
        "completeness": ({"incomplete": ("does-not-hold",)}, {"incomplete": ("holds",)}),
        "python-overhead": ({"no-improvement": ("does-not-hold",)},
                            {"no-improvement": ("holds",), "python-grows": ("does-not-hold", "partly")},
                            {"no-improvement": ("holds",), "python-grows": ("holds",)}),
        # partly: one at a time here because these devices share one autograd worker.
        "backward": ({"backward-sequential": ("holds", "partly")}, {"backward-sequential": ("does-not-hold",)}),
        "data-wait": ({"data-bottleneck": ("partly",)}, {"data-bottleneck": ("does-not-hold",)}),
    },
)
