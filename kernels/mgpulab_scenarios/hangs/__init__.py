"""Scenario 5 — why DataParallel and DDP "hang" (seed 003).

The scenario as data: parameters, steps with their templated cells, experiments and claims.
What each cell's recording becomes is in :mod:`.evidence`, each claim's verdict in :mod:`.verdicts`.
"""
from __future__ import annotations

from ..core import PLACEMENT, Cell, Claim, Experiment, Parameter, Scenario, Step, at_most_devices, load_template
from .evidence import e_oom, e_oom_ddp, e_slow_link, e_uneven, e_dtype, e_fault, e_fix, e_collectives
from .verdicts import (v_oom_hang, v_oom_silent, v_oom_aggregation, v_collectives, v_slow_link, v_waiting, v_stall,
                       v_uneven, v_identical, v_dtype, v_deadlock)

SOURCE = "003_5eac2459042e419e.txt"
SOURCE_TITLE = "Why do PyTorch's DataParallel and DistributedDataParallel implementations hang indefinitely?"  # the article's own title, shown with the file name as a detail

PARAMETERS = (
    Parameter("world_size", "int", 2, "DDP ranks / DataParallel devices: one GPU per rank over NCCL when the host "
              "has enough, ranks sharing the GPUs over gloo when it has fewer, CPU processes over gloo without "
              "one", 2, 8),
    PLACEMENT,
    Parameter("fault", "choice", "skip_collective",
              "injected fault: none | uneven_steps (rank r gets r extra batches) | skip_collective (rank 1 never "
              "reaches the final all_reduce) | slow_rank (rank 1 sleeps sleep_s after its first step)",
              choices=("none", "uneven_steps", "skip_collective", "slow_rank")),
    Parameter("fix", "choice", "pg_timeout", "fix tried on the faulty run: Join context manager, DistributedSampler, "
              "or a short process-group timeout (pg_timeout_s)",
              choices=("join", "distributed_sampler", "pg_timeout")),
    Parameter("hang_timeout_s", "float", 3.0, "watchdog: how long a rank may send nothing before the lab shows "
              "every rank's stack and stops the run",
              1.0, 30.0),
    Parameter("pg_timeout_s", "float", 3.0, "process-group timeout used by the pg_timeout fix", 1.0, 60.0),
    Parameter("sleep_s", "float", 1.0, "how long rank 1 sleeps after its first step with fault=slow_rank", 0.0, 20.0),
    Parameter("comm_delay_ms", "float", 40.0, "injected delay on each gradient allreduce (slow link)", 0.0, 500.0),
    Parameter("steps", "int", 3, "timed steps per phase of the slow-link run, after a warm-up step; timing "
              "verdicts need 3 or more to see their spread", 2, 20),
    Parameter("oom_batch_size", "int", 8192, "batch for the OOM check (article: 1024 * 8)", 1, 1_000_000),
    Parameter("device_memory_mib", "float", 1.0, "EMULATED device memory budget in MiB (CPU has no device "
              "memory limit; this is a declared budget checked before the forward)", 0.01, 1_000_000.0),
    Parameter("seed", "int", 0, "seed for data and weights", 0, 2 ** 31 - 1),
)

OOM_CELL = load_template("hangs_oom")

FAULT_CELL = load_template("hangs_fault")

FIX_CELL = load_template("hangs_fix")

SLOW_CELL = load_template("hangs_slow_link")

UNEVEN_CELL = load_template("hangs_uneven_batches")

OOM_DDP_CELL = load_template("hangs_oom_ddp")

COLLECTIVES_CELL = load_template("hangs_collectives")

DTYPE_CELL = load_template("hangs_dtype_mismatch")

STEPS = (
    Step("oom", "**Batch too large (Example 1).** What does an oversized batch do to training? "
         "The cell runs a batch of {{oom_batch_size}} rows on DataParallel, then in DDP where one rank's share "
         "does not fit, against a per-device memory budget: the GPU's own memory, or on the CPU (which has no "
         "device memory limit) a declared, **emulated** budget of {{device_memory_mib}} MiB per device.",
         (Cell("oom", OOM_CELL), Cell("oom-ddp", OOM_DDP_CELL)), "An oversized batch on DataParallel…",
         ("hangs", "fails fast with an error"), ("oom-hang", "oom-silent", "oom-aggregation-hang"),
         tells=(("stuck", "never returns", "silent"), ("raises", "out of memory error", "diagnosed")),
         explanation="**Why.** Running out of memory is an error raised in the process that asked for the "
                     "memory (`CUDA out of memory` on a GPU, the emulated budget's error here), at once. In DDP "
                     "the rank that failed exits; the others then wait in their next collective for a rank that "
                     "is gone, and *that* wait is what can look like a hang until the launcher (or a "
                     "process-group timeout) stops them."),
    Step("collectives", "**What aggregates the gradients.** One DataParallel step in this process, and DDP steps "
         "that count their gradient all-reduces.",
         (Cell("collectives", COLLECTIVES_CELL),), "Does DataParallel use all_reduce to aggregate gradients?",
         ("yes, like DDP", "no"), ("collectives",),
         tells=(("process group", "same collective"), ("reduce_add", "autograd sums")),
         explanation="**Why.** DataParallel has no process group: its replicas live in one process, and their "
                     "gradients flow back through autograd into the one model on device 0, summed there "
                     "(`reduce_add`). `all_reduce` is DDP's: every rank holds its own model and the ranks "
                     "exchange gradients."),
    Step("slow-link", "**Slow link (Example 2).** DDP with a delay injected on every gradient allreduce "
         "(`comm_delay_ms`). Measure each rank's communication share of the step.",
         (Cell("slow-link", SLOW_CELL),), "With a slow link, does DDP hang?", ("hangs", "slows down"),
         ("slow-link", "waiting-dominates", "stall-indefinitely"),
         tells=(("stuck", "never finishes", "stalls"), ("longer steps", "completes", "finishes")),
         explanation="**Why.** A delay on every all-reduce makes each step wait longer for communication, but "
                     "every collective still completes: the ranks progress, more slowly, and the communication "
                     "share of the step grows. A hang needs a collective that some rank never joins."),
    Step("uneven-batches", "**Different batch sizes per rank (Example 3).** Rank 0 gets 10 rows, rank 1 gets 20, as "
         "in the article. Then the other half of the article's mismatch: the same shapes, but the last rank's model "
         "and batch in float64 while the others' are float32.",
         (Cell("uneven-batches", UNEVEN_CELL), Cell("dtype-mismatch", DTYPE_CELL)),
         "Does DDP hang with different batch sizes per rank?",
         ("yes", "no"), ("uneven-batches", "identical-shapes-essential", "dtype-mismatch"),
         tells=(("hang", "stuck"), ("works", "runs fine", "completes")),
         explanation="**Why.** DDP all-reduces *gradients*, whose shapes depend on the model, not on the batch."),
    Step("collective-fault", "**Different numbers of collectives.** Run DDP with the fault {{fault}}, watched by "
         "the lab's watchdog (it shows every rank's stack when the ranks stop making progress). Then try the fix "
         "{{fix}}.",
         (Cell("fault", FAULT_CELL), Cell("fix", FIX_CELL)), "With fault={fault}, what happens?",
         ("hang", "error", "runs fine"), ("deadlock",),
         tells=(("silent", "detected", "deadlock"), ("raises", "exception"), ("completes", "finishes")),
         explanation="**Why.** What hangs DDP is ranks that run different numbers of collectives: more steps on "
                     "one rank, or a rank that skips one. The others wait in the collective until a timeout."),
)


COLLECTIVE_TROUBLE = ("hang", "failed:collective", "failed:abort")

EXPERIMENTS = (
    Experiment("oom", "Oversized batch vs an EMULATED device memory budget", ("DataParallel xN",),
               metrics=(), chart="bar: needed vs budget per device", evidence=e_oom),
    Experiment("oom-ddp", "DDP with one rank out of memory: raised, or its batch skipped", ("raise", "skip_batch"),
               metrics=("rank_loss",), chart="table: per-rank state", evidence=e_oom_ddp,
               provokes=("failed:oom", "hang", "failed:collective")),
    Experiment("collectives", "What aggregates the gradients: DataParallel's backward vs DDP's all-reduces",
               ("DataParallel xN", "DDP xN"), metrics=("allreduce_buckets",), chart="table", evidence=e_collectives),
    Experiment("slow-link", "DDP: no delay vs injected comm delay, per rank", ("baseline", "delayed"),
               metrics=("comm_ms", "step_ms"), chart="stacked bar: comm share per rank, both phases",
               evidence=e_slow_link, provokes=("hang",)),
    Experiment("uneven-batches", "DDP with different batch sizes per rank (10 vs 20 rows)", ("DDP xN",),
               metrics=("loss", "rank_loss"), chart="table: per-rank checksums", evidence=e_uneven,
               provokes=COLLECTIVE_TROUBLE),
    Experiment("dtype-mismatch", "DDP with one rank's model and batch in another dtype (float64 vs float32)",
               ("mixed dtypes",), metrics=("rank_loss",), chart="table: per-rank state and error",
               evidence=e_dtype, provokes=COLLECTIVE_TROUBLE),
    Experiment("fault", "An injected fault: different numbers of collectives per rank", ("faulty",),
               metrics=("rank_loss",), chart="table: per-rank state and stack", evidence=e_fault,
               provokes=COLLECTIVE_TROUBLE),
    Experiment("fix", "The same fault with a fix", ("fixed",), metrics=("rank_loss",), chart="table", evidence=e_fix,
               provokes=COLLECTIVE_TROUBLE),
)

CLAIMS = (
    Claim("oom-hang", "A batch size that's too large for the available GPU memory on one or more devices will cause "
          "an out-of-memory error, which may manifest as an apparent hang.", "oom", v_oom_hang),
    Claim("oom-silent", "Running out of GPU memory (especially with large batch sizes or models) on one or more "
          "devices can cause processes to hang, often without clear error messages.", "oom", v_oom_silent),
    Claim("oom-aggregation-hang", "This can manifest indirectly as a hang during gradient aggregation.", "oom-ddp",
          v_oom_aggregation),
    Claim("collectives", "Both mechanisms rely on collective operations (e.g., `all_reduce`, `all_gather`) to "
          "aggregate gradients computed independently on different devices.", "collectives", v_collectives),
    Claim("slow-link", "If the network connecting the processes is slow or unreliable (e.g., using `gloo` over a "
          "congested network), the `all_reduce` operation used to aggregate gradients will be significantly "
          "delayed, potentially appearing as a hang.", "slow-link", v_slow_link),
    Claim("waiting-dominates", "If the transfer speed is significantly slower than the computation speed, processes "
          "will spend most of their time waiting, creating the illusion of a hang.", "slow-link", v_waiting),
    Claim("stall-indefinitely", "Packets might be dropped or delayed, causing processes to stall indefinitely while "
          "waiting for others.", "slow-link", v_stall),
    Claim("uneven-batches", "If different processes receive input tensors of varying shapes, the `all_reduce` "
          "operation will fail silently or produce incorrect results, leading to a hang.", "uneven-batches",
          v_uneven),
    Claim("identical-shapes-essential", "Employing consistent data loaders and ensuring all processes receive tensors "
          "of identical shapes and data types is essential.", "uneven-batches", v_identical),
    Claim("dtype-mismatch", "mismatched tensor dimensions or data types, can lead to errors in the collective "
          "operations, resulting in the hang", "dtype-mismatch", v_dtype),
    Claim("deadlock", "Improperly designed synchronization primitives can result in deadlocks, where multiple "
          "processes block each other, preventing any progress.", "fault", v_deadlock),
)

SCENARIO = Scenario(
    id="hangs", title="Hangs in DataParallel and DDP: which failures really hang?", source=SOURCE,
    source_title=SOURCE_TITLE,
    summary="Five suspects from the article, each run under a watchdog: an oversized batch (on DataParallel, and "
            "one rank's share in DDP); what aggregates the gradients; a slow link (each rank's communication "
            "share); different batch sizes per rank; different numbers of steps or a skipped collective; and the "
            "fixes the article suggests.",
    parameters=PARAMETERS, steps=STEPS, experiments=EXPERIMENTS, claims=CLAIMS,
    constraints=(at_most_devices("world_size"),),
    # What each choice of a step's question is, in verdicts (see Scenario.outcomes).
    outcomes={
        "oom": ({"oom-hang": ("holds",)}, {"oom-hang": ("partly",)}),
        "collectives": ({"collectives": ("holds",)}, {"collectives": ("partly",)}),
        "slow-link": ({"slow-link": ("holds",)}, {"slow-link": ("partly",)}),
        "uneven-batches": ({"uneven-batches": ("holds",)}, {"uneven-batches": ("does-not-hold",)}),
        # An error (partly) is not told apart from a slow rank stopped as a hang (also partly): not judged.
        "collective-fault": ({"deadlock": ("holds",)}, {}, {"deadlock": ("does-not-hold",)}),
    },
)
