"""Scenario 1 — DataParallel basics (seed 004): split, replicate, gather, average, scaling.

The scenario as data: parameters, steps with their templated cells, experiments and claims.
What each cell's recording becomes is in :mod:`.evidence`, each claim's verdict in :mod:`.verdicts`.
"""
from __future__ import annotations

from ..core import PLACEMENT, Cell, Claim, Experiment, Parameter, Scenario, Step, at_most_devices, load_template
from .evidence import e_split, e_equivalence, e_replication, e_placement, e_scaling
from .verdicts import (v_splits_evenly, v_one_chunk_per_gpu, v_gathered, v_imbalance, v_parallel, v_full_batch,
                       v_averaged, v_replicated, v_replication_cost, v_ddp_replicates_once, v_main_gpu_update,
                       v_model_on_gpu_first, v_inputs_on_default_gpu, v_not_linear, v_myth_linear, v_ddp_efficient)

SOURCE = "004_7c517dd2c75ffa4d.txt"
SOURCE_TITLE = "DataParallel basics in PyTorch - Deep Dive"  # the article's own title, shown with the file name as a detail

PARAMETERS = (
    Parameter("batch_size", "int", 64, "rows in one input batch", 1, 512),
    Parameter("devices", "int", 4, "devices for DataParallel / DDP ranks: GPUs (shared when fewer than this), "
              "or emulated CPU devices", 1, 8),
    PLACEMENT,
    Parameter("hidden", "int", 32, "hidden width of the MLP", 2, 512),
    Parameter("d_in", "int", 16, "input features", 1, 256),
    Parameter("steps", "int", 3, "training steps for the equivalence run", 1, 20),
    Parameter("lr", "float", 0.05, "SGD learning rate", 1e-5, 1.0),
    Parameter("seed", "int", 0, "seed for data and initial weights", 0, 2 ** 31 - 1),
    Parameter("timing_repeats", "int", 5, "timed steps (or forwards) per variant after a warm-up step; "
              "timing verdicts need 3 or more to see their spread", 2, 50),
    Parameter("compare_ddp", "bool", True,
              "also time DDP x devices in the sweep (rank processes: gloo on CPU, NCCL on GPUs)"),
)

SPLIT_CELL = load_template("dp_basics_split")

EQUIV_CELL = load_template("dp_basics_equivalence")

REPLICATE_CELL = load_template("dp_basics_replication")

SCALING_CELL = load_template("dp_basics_scaling")

PLACEMENT_CELL = load_template("dp_basics_placement")

STEPS = (
    Step("split", "**How DataParallel splits a batch.** The article says the batch is divided *evenly*. This "
         "cell scatters a batch of {{batch_size}} rows over {{devices}} devices, counts the rows each device "
         "gets, and looks at where the outputs come back.",
         (Cell("split", SPLIT_CELL),),
         "With batch_size={batch_size} on {devices} devices, how many rows does each device get?",
         ("the same number on every device", "uneven chunks (last one smaller or missing)", "random"),
         ("splits-evenly", "one-chunk-per-gpu", "gathered-on-device-0", "runs-in-parallel", "uneven-imbalance"),
         tells=((), (), ("random", "shuffled")),
         explanation="**Why.** DataParallel splits with `torch.chunk`: ceil(B/n) rows per device, so a batch "
                     "that does not divide gives uneven chunks (the last one smaller, and sometimes fewer "
                     "chunks than devices). The outputs are gathered on device 0."),
    Step("equivalence", "**Same seed, same data: one device vs DataParallel.** Train both at the same seed on "
         "the same batch and compare gradients and weights after a few SGD steps.",
         (Cell("equivalence", EQUIV_CELL),),
         "Are the gradients of DataParallel identical to single-device training at the same seed?",
         ("identical up to float rounding", "N times larger", "different"),
         ("full-batch-equivalence", "gradients-averaged", "update-on-main-gpu"),
         explanation="**Why.** The replicas' gradients flow back to the one original model, summed by autograd; "
                     "the averaging comes from the loss mean over the gathered batch, so the result is the "
                     "single-device gradient up to float rounding."),
    Step("replication", "**Replication.** Run several forwards of a DataParallel model, and watch the replica "
         "modules and the time of each phase of the forward.",
         (Cell("replication", REPLICATE_CELL),),
         "Is the model copied once, or on every forward?", ("once", "every forward"),
         ("replicated-every-forward", "replication-cost", "ddp-replicates-once"),
         tells=(("once", "one time"), ("each forward", "per step", "every step")),
         explanation="**Why.** Each forward builds new replica modules (`replicate`) before running them, so "
                     "the copy is paid on every step, not once. DDP copies once: each rank process keeps its one "
                     "model object for the whole run, and only gradients travel."),
    Step("scaling", "**Speed-up vs device count.** Time one training step with 1 to {{devices}} devices (and "
         "DDP over {{devices}} ranks). The label says which devices ran (separate GPUs, virtual devices "
         "sharing a GPU, or the CPU emulation), and the phase split shows where the time goes.",
         (Cell("scaling", SCALING_CELL),),
         "With {devices} devices, what speed-up over one device do you expect?",
         ("about {devices}x", "more than 1x but less than {devices}x", "none or a slowdown"),
         ("not-linear", "myth-linear", "ddp-more-efficient"),
         explanation="**Why.** DataParallel pays scatter, replicate and gather on every step, from one "
                     "process. Devices that share hardware (emulated CPU devices on the host's cores, or "
                     "virtual devices on fewer GPUs) cannot scale like separate GPUs at all: a speed-up above "
                     "the device count there is noise, and is flagged as such."),
    Step("placement", "**Where the model and the input must be (CUDA only).** torch's own `nn.DataParallel` is "
         "called with the model left on the CPU, with the wrapper moved after wrapping, and with the input on "
         "the CPU (and on another GPU). On a host without a GPU it cannot be measured: the verdicts say so.",
         (Cell("placement", PLACEMENT_CELL),),
         "The model is on cuda:0 and the input batch is still on the CPU. What does DataParallel do?",
         ("a device-mismatch error", "it copies the input to the GPUs and runs"),
         ("model-on-gpu-first", "inputs-on-default-gpu"),
         explanation="**Why.** DataParallel checks, at each forward, that the module's parameters and buffers "
                     "are on `device_ids[0]`: a model left on the CPU fails then, however it was wrapped. The "
                     "input is scattered from wherever it is (`scatter` copies each chunk to its device), so "
                     "it need not start on the default GPU."),
)


EXPERIMENTS = (
    Experiment("split", "Batch split and gather", ("DataParallel xN",), metrics=("samples", "apply_ms", "memory_mib"),
               chart="bar: samples per device", evidence=e_split),
    Experiment("equivalence", "1 device vs DataParallel xN, same seed and data", ("1 device", "DataParallel xN"),
               metrics=("loss",), chart="line: loss per step, both variants", evidence=e_equivalence),
    Experiment("replication", "Replication on every forward", ("hidden", "hidden x16"),
               metrics=("replicate_ms", "step_ms"), chart="bar: replicate ms per step", evidence=e_replication),
    Experiment("placement", "torch's DataParallel with the model or the input off the default GPU (CUDA only)",
               ("model on the CPU", "moved after wrapping", "input on the CPU", "input on another GPU"), metrics=(),
               chart="table: what each forward did", evidence=e_placement),
    Experiment("scaling", "Speed-up vs device count", ("1 device", "DataParallel x2..N", "DDP xN"),
               metrics=("step_ms", "samples"), chart="bar: step ms and speed-up per device count", evidence=e_scaling),
)

CLAIMS = (
    Claim("splits-evenly", "For example, a batch of 64 images on 4 GPUs becomes 4 chunks of 16 images each.",
          "split", v_splits_evenly),
    Claim("one-chunk-per-gpu", "When you wrap your model with torch.nn.DataParallel, it automatically splits each "
          "input batch into smaller chunks, one per GPU.", "split", v_one_chunk_per_gpu),
    Claim("gathered-on-device-0", "DataParallel sends each chunk to a GPU, runs the model forward pass, then "
          "collects all outputs on the default GPU.", "split", v_gathered),
    Claim("runs-in-parallel", "DataParallel splits input data across GPUs, runs the model on each part in parallel, "
          "then combines the results to update the model.", "split", v_parallel),
    Claim("uneven-imbalance", "Batch size per GPU affects memory usage and speed; uneven batch sizes can cause load "
          "imbalance and reduce efficiency.", "split", v_imbalance),
    Claim("full-batch-equivalence", "Model weights update as if training on the full batch at once.",
          "equivalence", v_full_batch),
    Claim("gradients-averaged", "DataParallel then averages these gradients across GPUs to keep the model weights "
          "synchronized.", "equivalence", v_averaged),
    Claim("replicated-every-forward", "Internally, DataParallel copies the model to each GPU at every forward call.",
          "replication", v_replicated),
    Claim("replication-cost", "Model replication overhead can slow training, especially with large models.",
          "replication", v_replication_cost),
    Claim("ddp-replicates-once", "Alternatives like DistributedDataParallel came later to reduce this overhead by "
          "replicating the model once and using more efficient communication.", "replication", v_ddp_replicates_once),
    Claim("update-on-main-gpu", "Gradients from all GPUs are averaged and used to update the model weights on the "
          "main GPU.", "equivalence", v_main_gpu_update),
    Claim("model-on-gpu-first", "DataParallel requires the model to be on GPU before wrapping; forgetting this "
          "causes errors or slow CPU fallback.", "placement", v_model_on_gpu_first),
    Claim("inputs-on-default-gpu", "DataParallel expects inputs on the default GPU; mismatched devices cause runtime "
          "errors.", "placement", v_inputs_on_default_gpu),
    Claim("not-linear", "Speedup improves with more GPUs but not linearly; overhead grows.", "scaling",
          v_not_linear),
    Claim("myth-linear", "DataParallel always makes training faster in direct proportion to the number of GPUs.",
          "scaling", v_myth_linear),
    Claim("ddp-more-efficient", "For large models or many GPUs, DistributedDataParallel is more efficient and "
          "scalable than DataParallel.", "scaling", v_ddp_efficient),
)

SCENARIO = Scenario(
    id="dp-basics", title="DataParallel basics: split, replicate, gather, average", source=SOURCE, source_title=SOURCE_TITLE,
    summary="Measure how DataParallel splits a batch, where outputs land, whether gradients match one device, "
            "how often the model is replicated, and how step time scales with the device count.",
    parameters=PARAMETERS, steps=STEPS, experiments=EXPERIMENTS, claims=CLAIMS,
    constraints=(at_most_devices("devices"),),
    # What each choice of a step's question is, in verdicts (see Scenario.outcomes).
    outcomes={
        "split": ({"splits-evenly": ("holds",)}, {"splits-evenly": ("partly",)}, {}),
        "equivalence": ({"full-batch-equivalence": ("holds",)}, {}, {"full-batch-equivalence": ("partly", "does-not-hold")}),
        "replication": ({"replicated-every-forward": ("does-not-hold",)}, {"replicated-every-forward": ("holds",)}),
        # A near-linear speed-up and a slowdown both contradict "improves, but not linearly": the linear claim
        # tells them apart (it holds only within 10% of linear at every device count).
        "scaling": ({"not-linear": ("does-not-hold",), "myth-linear": ("holds",)}, {"not-linear": ("holds",)},
                    {"not-linear": ("does-not-hold",), "myth-linear": ("does-not-hold",)}),
        "placement": ({"inputs-on-default-gpu": ("holds",)}, {"inputs-on-default-gpu": ("does-not-hold",)}),
    },
)
