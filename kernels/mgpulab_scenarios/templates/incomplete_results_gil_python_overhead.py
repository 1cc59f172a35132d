from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import time, torch, torch.nn as nn, mgpulab as lab
from mgpulab_scenarios import rank_fns
devices, dev = PARAM.devices, lab.devices.device(0, PARAM.placement)
class PythonHeavy(nn.Module):
    def __init__(self, d, depth):
        super().__init__(); self.layers = nn.ModuleList(nn.Linear(d, d) for _ in range(depth))
    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x
torch.manual_seed(PARAM.seed)
model = PythonHeavy(8, PARAM.depth).to(dev)
x = torch.randn(PARAM.batch_size, 8).to(dev)
dp = lab.DataParallel(model, device_ids=list(range(devices)), placement=PARAM.placement)
with torch.no_grad():
    for label, m in (("1 device", model), (f"DataParallel x{devices}", dp)):
        m(x)  # warm-up
        for i in range(PARAM.repeats):
            t0 = time.perf_counter(); m(x)
            if dev.type == "cuda": torch.cuda.synchronize()
            lab.log(i, forward_ms=(time.perf_counter() - t0) * 1000, run_id=label)
        print(label, round((time.perf_counter() - t0) * 1000, 3), "ms/forward (last)")
print("replica intervals (s):", dp.last_phases.intervals, "threads:", dp.last_phases.threads)
if devices > 1:  # the same model in DDP processes: one interpreter (and GIL) per rank
    result = lab.launch(rank_fns.ddp_forward_overhead, devices, run_id=f"DDP x{devices}", placement=PARAM.placement,
                        kwargs=dict(seed=PARAM.seed, batch=PARAM.batch_size, d=8, depth=PARAM.depth, repeats=PARAM.repeats,
                                    emit=True), timeout_s=60, time_limit_s=120)
    if result.ok:
        print(f"DDP x{devices}:", [round(r["forward_ms"], 3) for r in result.results], "ms/forward per rank")
