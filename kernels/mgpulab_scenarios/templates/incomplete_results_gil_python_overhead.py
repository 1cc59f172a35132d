from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"Forward times of a {PARAM.forward_kind} model on one device and on DataParallel x{PARAM.devices}, at 1, 8 and "
      f"64 times batch {PARAM.batch_size}, {PARAM.repeats} timed forwards after a warm-up each"
      + (", then DDP" if PARAM.devices > 1 else ""))
import time, torch, torch.nn as nn, mgpulab as lab
from mgpulab_scenarios import evidence, rank_fns
from mgpulab_scenarios.common import still
run = evidence.start("incomplete-results-gil/python-overhead", devices=PARAM.devices, placement=PARAM.placement,
                     batch_size=PARAM.batch_size, forward_kind=PARAM.forward_kind, depth=PARAM.depth,
                     repeats=PARAM.repeats, seed=PARAM.seed)
devices, dev = PARAM.devices, lab.devices.device(0, PARAM.placement)
class PythonHeavy(nn.Module):  # many tiny layers: the forward's cost is Python and dispatch, not arithmetic
    def __init__(self, d, depth):
        super().__init__(); self.layers = nn.ModuleList(nn.Linear(d, d) for _ in range(depth))
    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x
torch.manual_seed(PARAM.seed)
if PARAM.forward_kind == "python":
    model = PythonHeavy(8, PARAM.depth).to(dev)
else:  # two wide layers: arithmetic-bound
    model = nn.Sequential(nn.Linear(8, 1024), nn.Tanh(), nn.Linear(1024, 8)).to(dev)
dp = lab.DataParallel(model, device_ids=list(range(devices)), placement=PARAM.placement)
with torch.no_grad():
    for rows, size in ((PARAM.batch_size, ""), (8 * PARAM.batch_size, ", 8× batch"),  # then 8 and 64 times the rows
                       (64 * PARAM.batch_size, ", 64× batch")):
        x = torch.randn(rows, 8).to(dev)
        for label, m in (("1 device", model), (f"DataParallel x{devices}", dp)):
            for i in range(PARAM.repeats + 1):  # the first forward is a warm-up
                t0 = time.perf_counter(); m(x)
                if dev.type == "cuda": torch.cuda.synchronize()
                lab.log(i, forward_ms=(time.perf_counter() - t0) * 1000, samples=rows, run_id=label + size)
            print(f"{label + size}: {PARAM.repeats} forwards timed")
print("replica intervals (s):", dp.last_phases.intervals, "threads:", dp.last_phases.threads)
if devices > 1:  # the same model in DDP processes: one interpreter (and GIL) per rank
    print(f"starting {devices} DDP rank processes (each imports torch first: seconds on a busy host)")
    with still("the DDP rank processes: starting (each imports torch first), then running"):
        result = lab.launch(rank_fns.ddp_forward_overhead, devices, run_id=f"DDP x{devices}", placement=PARAM.placement,
                            kwargs=dict(seed=PARAM.seed, batch=PARAM.batch_size, d=8, depth=PARAM.depth,
                                        repeats=PARAM.repeats, emit=True), timeout_s=60, time_limit_s=120)
    run.add_ranks(result)
for row in run.finish(threads=list(dp.last_phases.threads), host_cores=lab.devices.host_cores())["variants"]:
    t = row["forward_ms"]
    print(f"{row['tag']:>24}: " + (f"{t['median']:.3f} ms/forward (median; min {t['min']:.3f}, max {t['max']:.3f})"
                                   if t else "no result"))
