from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import torch, torch.nn.functional as F, mgpulab as lab
from torch import nn
from mgpulab_scenarios import rank_fns
devices, steps, dev = PARAM.devices, PARAM.num_steps, lab.devices.device(0, PARAM.placement)
def large_model(i, h):
    return nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(),
                         nn.Linear(h, h), nn.ReLU(), nn.Linear(h, i))
g = torch.Generator().manual_seed(PARAM.seed)
x = torch.randn(PARAM.batch_size, PARAM.input_size, generator=g).to(dev)
y = torch.randn(PARAM.batch_size, PARAM.input_size, generator=g).to(dev)
step_ms = {}
for n in sorted({1, devices}):
    label = "1 device" if n == 1 else f"DataParallel x{n}"
    torch.manual_seed(PARAM.seed + 1)
    model = large_model(PARAM.input_size, PARAM.hidden_size).to(dev)
    m = model if n == 1 else lab.DataParallel(model, device_ids=list(range(n)), placement=PARAM.placement)
    opt = torch.optim.Adam(m.parameters())
    timer = lab.StepTimer(m, run_id=label)  # frames per step and device, tagged with the variant
    for step in range(steps):
        with timer.phase("forward"):
            loss = F.mse_loss(m(x), y)
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step(); opt.zero_grad()
        timer.step(step, samples=PARAM.batch_size, loss=loss)
    timer.close()
    step_ms[label] = timer.mean("step_ms", skip=1)
    if n > 1:
        print("  last forward:", m.last_phases.to_dict())
if devices > 1:  # the same model and batch on DDP ranks, one shard each
    label = f"DDP x{devices}"
    result = lab.launch(rank_fns.ddp_train, devices, run_id=label, placement=PARAM.placement,
                        kwargs=dict(seed=PARAM.seed, batch=PARAM.batch_size, d_in=PARAM.input_size, d_out=PARAM.input_size,
                                    hidden=PARAM.hidden_size, layers=4, steps=steps, lr=0.001, optimizer="adam",
                                    emit=True),
                        timeout_s=60, time_limit_s=120, hang_timeout_s=60)
    step_ms[label] = max(r["step_ms"] for r in result.results) if result.ok else None
for label, ms in step_ms.items():
    print(f"{label:>16}: " + (f"{ms:.2f} ms/step" if ms else "no result"))
