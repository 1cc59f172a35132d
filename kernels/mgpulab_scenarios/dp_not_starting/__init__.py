"""Scenario 2 — training not starting / slow with DataParallel (seed 000).

The scenario as data: parameters, steps with their templated cells, experiments and claims.
What each cell's recording becomes is in :mod:`.evidence`, each claim's verdict in :mod:`.verdicts`.
"""
from __future__ import annotations

from ..core import PLACEMENT, Cell, Claim, Experiment, Parameter, Scenario, Step, at_most_devices, load_template
from .evidence import e_padded, e_large, e_custom, e_ddp_init, e_copied
from .verdicts import (v_padded, v_consistent, v_transfer, v_no_decrease, v_stall, v_overhead_grows, v_ddp,
                       v_ddp_init, v_custom, v_model_parallel, v_gathers_losses, v_reduced_on_master)

SOURCE = "000_3b7eff0f44992b59.txt"
SOURCE_TITLE = "Why is training not starting with nn.DataParallel?"  # the article's own title, shown with the file name as a detail

PARAMETERS = (
    Parameter("devices", "int", 2, "devices for DataParallel / DDP ranks: GPUs (shared when fewer than this), "
              "or emulated CPU devices", 1, 8),
    PLACEMENT,
    Parameter("seq_batch_size", "int", 4, "batch size of the padded variable-length loader (Example 1)", 1, 8),
    Parameter("trim_padding", "bool", False,
              "the model trims its output to the longest sequence of its own chunk (as pad_packed_sequence "
              "does without total_length)"),
    Parameter("input_size", "int", 512, "LargeModel input size (article: 10000; kept small for CPU)", 8, 4096),
    Parameter("hidden_size", "int", 512, "LargeModel hidden size (article: 5000)", 8, 4096),
    Parameter("batch_size", "int", 16, "LargeModel batch size (article: 16)", 1, 1024),
    Parameter("num_steps", "int", 4, "timed steps per variant after a warm-up step (article: 10); timing "
              "verdicts need 3 or more to see their spread", 2, 20),
    Parameter("weight_kind", "choice", "parameter", "how CustomLayer holds its weight (article: nn.Parameter)",
              choices=("parameter", "buffer", "plain_tensor")),
    Parameter("seed", "int", 0, "seed for data and weights", 0, 2 ** 31 - 1),
)


PADDED_CELL = load_template("dp_not_starting_padded")

LARGE_CELL = load_template("dp_not_starting_large_model")

CUSTOM_CELL = load_template("dp_not_starting_custom_layer")

COPIED_CELL = load_template("dp_not_starting_what_is_copied")

DDP_INIT_CELL = load_template("dp_not_starting_ddp_init")

STEPS = (
    Step("padded", "**Variable-length, padded batches (Example 1).** `pad_sequence` pads every batch to its "
         "longest sequence before DataParallel scatters it. With `trim_padding`, the model trims the padding to "
         "its own chunk's longest sequence.",
         (Cell("padded", PADDED_CELL),),
         "Does DataParallel fail on padded variable-length batches?",
         ("always", "only when replicas return different shapes", "never"), ("padded-errors", "consistent-tensor"),
         tells=(("always fails",), ("gather", "concatenate"), ("never fails", "splits fine")),
         explanation="**Why.** The padded tensor is rectangular, so it splits fine. Trouble starts when the "
                     "replicas return *different* shapes (a model that trims padding per chunk): then gather "
                     "cannot concatenate them."),
    Step("large-model", "**Large model, small batch (Example 2).** Time a step on 1 device and on DataParallel, "
         "and split DataParallel's forward into scatter / replicate / parallel apply / gather. Then what DDP "
         "asks before it runs at all: rank processes build `DistributedDataParallel` without, then with, "
         "`init_process_group`.",
         (Cell("large-model", LARGE_CELL), Cell("ddp-init", DDP_INIT_CELL)),
         "With a large model and batch {batch_size}, is DataParallel faster than one device?",
         ("faster", "about the same", "slower"),
         ("transfer-dominates", "time-does-not-decrease", "stall", "overhead-dominates", "ddp-graceful",
          "ddp-needs-init"),
         tells=(("speeds up", "quicker"), ("no difference",), ("slows", "costs more")),
         explanation="**Why.** Whether DataParallel wins is compute per device against what every step costs "
                     "whatever the batch: scattering the batch, copying the *whole* model to every device "
                     "(`replicate`, on every forward), running the replicas on threads of one process, and "
                     "gathering on device 0. A large model makes the copies bigger while a small batch leaves "
                     "each device little to do; the phase split shows which part took the time on this host. "
                     "DDP copies the model once and only exchanges gradients, but asks for a process group "
                     "first."),
    Step("custom-layer", "**Custom layers (Example 3).** The article's CustomLayer keeps its weight as an "
         "`nn.Parameter`; the cell runs it under DataParallel, next to a layer that keeps a plain tensor "
         "attribute.",
         (Cell("custom-layer", CUSTOM_CELL),),
         "Will the article's CustomLayer (weight is an nn.Parameter) fail on the worker devices?",
         ("yes", "no — only an unregistered tensor would"), ("custom-layer",),
         tells=(("error", "mismatch"), ("registered", "runs fine")),
         explanation="**Why.** `replicate()` copies registered parameters and buffers to every device; a plain "
                     "tensor attribute is copied by reference and stays on device 0."),
    Step("what-is-copied", "**Data or model parallelism?** Count the parameters each replica holds and the "
         "rows each replica gets; see what comes back from the replicas and where the gradients land.",
         (Cell("what-is-copied", COPIED_CELL),),
         "What does each replica hold?", ("the whole model", "a slice of the model's layers"),
         ("model-parallelism", "gathers-losses", "reduced-on-master"),
         explanation="**Why.** DataParallel is data parallelism: `replicate()` copies the whole module, every "
                     "parameter, to each device, and `scatter` gives each replica a slice of the *batch*, not of "
                     "the layers. The outputs are gathered on device 0, the loss is computed there, and the "
                     "replicas' gradients flow back into the one model on device 0. Model parallelism would put "
                     "different layers on different devices."),
)


EXPERIMENTS = (
    Experiment("padded", "Padded variable-length batches: 1 device vs DataParallel xN", ("1 device", "DataParallel xN"),
               metrics=(), chart="table: per batch, ok/error and rows per device", evidence=e_padded),
    Experiment("large-model", "Large model, small batch: 1 device vs DataParallel x2..N vs DDP xN",
               ("1 device", "DataParallel x2..N", "DDP xN"), metrics=("step_ms", "scatter_ms", "replicate_ms",
                                                                     "gather_ms", "apply_ms"),
               chart="stacked bar: scatter/replicate/apply/gather/backward/optimizer per variant", evidence=e_large),
    Experiment("custom-layer", "CustomLayer weight as parameter / buffer / plain tensor",
               ("parameter", "buffer", "plain_tensor"), metrics=(), chart="table", evidence=e_custom),
    Experiment("ddp-init", "DDP built in rank processes without, then with, init_process_group", ("ranks",),
               metrics=(), chart="table: per rank, the error without a process group", evidence=e_ddp_init),
    Experiment("what-is-copied", "Parameters and rows per replica, the gathered output and the gradients",
               ("DataParallel xN",), metrics=(), chart="table", evidence=e_copied),
)

CLAIMS = (
    Claim("padded-errors", "When the input data isn't perfectly divisible by the number of GPUs or contains "
          "variable-length sequences, `DataParallel` struggles to evenly distribute the workload. This often "
          "manifests as errors stemming from tensor dimensions not aligning correctly after the split or gather "
          "operations.", "padded", v_padded),
    Claim("consistent-tensor", "The `collate_fn` handles the padding of the sequences, and this padding is not "
          "accounted for by `DataParallel`, that expects a completely consistent tensor when using multiple GPUs.",
          "padded", v_consistent),
    Claim("transfer-dominates", "The transfer of data, model parameters, gradients, and loss across devices during "
          "forward and backward propagation can quickly dominate the training time, diminishing the overall speed "
          "benefits of `DataParallel`.", "large-model", v_transfer),
    Claim("time-does-not-decrease", "You will observe, especially when increasing the `input_size` and "
          "`hidden_size`, that the time does not decrease by using multiple GPUs.", "large-model", v_no_decrease),
    Claim("stall", "This can lead to a slower effective training time, and in some cases, may actually stall the "
          "training loop if the overhead outweighs the parallelization gains.", "large-model", v_stall),
    Claim("overhead-dominates", "As more GPUs are added, the communication overhead between the primary process and "
          "worker GPUs starts to dominate.", "large-model", v_overhead_grows),
    Claim("ddp-graceful", "The `DistributedDataParallel` class generally handles the process of distributed data "
          "parallelism more gracefully, because it uses separate processes instead of threads, making the whole "
          "setup less prone to the limitations above mentioned.", "large-model", v_ddp),
    Claim("ddp-needs-init", "It does, however, require a more involved setup and a better understanding of "
          "distributed computing, as it needs initialization of the processes and synchronization protocols.",
          "ddp-init", v_ddp_init),
    Claim("custom-layer", "DataParallel relies on all tensors being on the same device in the forward pass, and also "
          "in the backward pass when calculating the gradient, and the implementation of the CustomLayer is not "
          "guaranteed to transfer to the worker devices.", "custom-layer", v_custom),
    Claim("model-parallelism", "It is crucial to remember that the model's parameters remain in the primary "
          "process's memory, while only copies are used on the worker GPUs, making it a form of *model "
          "parallelism,* while primarily *data parallelism*.", "what-is-copied", v_model_parallel),
    Claim("gathers-losses", "`nn.DataParallel` operates by splitting the input batch across available GPUs, executing "
          "the forward pass independently on each device, then gathering the resulting losses before backpropagating "
          "through a single, averaged loss.", "what-is-copied", v_gathers_losses),
    Claim("reduced-on-master", "Specifically, the reduction operation of the gradients and the loss is done in the "
          "master device.", "what-is-copied", v_reduced_on_master),
)

SCENARIO = Scenario(
    id="dp-not-starting", title="When DataParallel training will not start", source=SOURCE, source_title=SOURCE_TITLE,
    summary="Padded variable-length batches, a large model with a small batch (where does the time go?), a "
            "custom layer's weight on the worker devices, what each replica holds, and DataParallel vs DDP step "
            "time.",
    parameters=PARAMETERS, steps=STEPS, experiments=EXPERIMENTS, claims=CLAIMS,
    constraints=(at_most_devices("devices"),),
    # What each choice of a step's question is, in verdicts (see Scenario.outcomes).
    outcomes={
        "padded": ({"padded-errors": ("holds",)}, {"padded-errors": ("partly",)}, {"padded-errors": ("does-not-hold",)}),
        # "about the same" is a difference within the noise: an inconclusive verdict, which judges nothing.
        "large-model": ({"time-does-not-decrease": ("does-not-hold",)}, {}, {"time-does-not-decrease": ("holds",)}),
        "custom-layer": ({"custom-layer": ("holds",)}, {"custom-layer": ("does-not-hold",)}),
        "what-is-copied": ({"model-parallelism": ("does-not-hold",)}, {"model-parallelism": ("holds",)}),
    },
)
