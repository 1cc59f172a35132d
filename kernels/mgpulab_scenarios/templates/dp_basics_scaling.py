from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import torch, torch.nn.functional as F, mgpulab as lab
from torch import nn
from mgpulab_scenarios import rank_fns
devices, steps = PARAM.devices, PARAM.timing_repeats + 1  # the first step is a warm-up
dev = lab.devices.device(0, PARAM.placement)
g = torch.Generator().manual_seed(PARAM.seed)
x = torch.randn(PARAM.batch_size, PARAM.d_in, generator=g).to(dev)
y = torch.randn(PARAM.batch_size, 1, generator=g).to(dev)
step_ms = {}
for n in range(1, devices + 1):
    label = "1 device" if n == 1 else f"DataParallel x{n}"
    torch.manual_seed(PARAM.seed + 1)
    model = nn.Sequential(nn.Linear(PARAM.d_in, PARAM.hidden), nn.ReLU(), nn.Linear(PARAM.hidden, 1)).to(dev)
    m = model if n == 1 else lab.DataParallel(model, device_ids=list(range(n)), placement=PARAM.placement)
    opt = torch.optim.SGD(m.parameters(), lr=PARAM.lr)
    timer = lab.StepTimer(m, run_id=label)  # frames per step and device, tagged with the variant
    for step, (xb, yb) in enumerate(timer.data([(x, y)] * steps)):
        with timer.phase("forward"):
            loss = F.mse_loss(m(xb), yb)
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step(); opt.zero_grad()
        timer.step(step, samples=len(xb), loss=loss)
    timer.close()
    step_ms[label] = timer.mean("step_ms", skip=1)
if PARAM.compare_ddp and devices > 1:  # the same batch on DDP ranks (processes), one shard each
    label = f"DDP x{devices}"
    result = lab.launch(rank_fns.ddp_train, devices, run_id=label, placement=PARAM.placement,
                        kwargs=dict(seed=PARAM.seed, batch=PARAM.batch_size, d_in=PARAM.d_in, hidden=PARAM.hidden,
                                    steps=steps, lr=PARAM.lr, emit=True),
                        timeout_s=60, time_limit_s=120, hang_timeout_s=30)
    step_ms[label] = max(r["step_ms"] for r in result.results) if result.ok else None
base = step_ms["1 device"]
for label, ms in step_ms.items():
    print(f"{label:>16}: " + (f"{ms:.3f} ms/step, speed-up x{base / ms:.2f}" if ms else "no result"))
