from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import torch, torch.nn.functional as F, mgpulab as lab
from torch import nn
from mgpulab_scenarios import evidence
run = evidence.start("dp-basics/replication", batch_size=PARAM.batch_size, devices=PARAM.devices,
                     placement=PARAM.placement, hidden=PARAM.hidden, d_in=PARAM.d_in, lr=PARAM.lr, seed=PARAM.seed,
                     timing_repeats=PARAM.timing_repeats)
devices, dev = PARAM.devices, lab.devices.device(0, PARAM.placement)
g = torch.Generator().manual_seed(PARAM.seed)
x = torch.randn(PARAM.batch_size, PARAM.d_in, generator=g).to(dev)
y = torch.randn(PARAM.batch_size, 1, generator=g).to(dev)
models = {}
for width in (PARAM.hidden, min(16 * PARAM.hidden, 4096)):  # the same MLP, and one 16 times wider
    label = f"DataParallel x{devices}, hidden {width}"
    torch.manual_seed(PARAM.seed + 1)
    model = nn.Sequential(nn.Linear(PARAM.d_in, width), nn.ReLU(), nn.Linear(width, 1)).to(dev)
    dp = lab.DataParallel(model, device_ids=list(range(devices)), placement=PARAM.placement, keep_replicas=True)
    opt = torch.optim.SGD(dp.parameters(), lr=PARAM.lr)
    timer = lab.StepTimer(dp, run_id=label)  # replicate_ms is one of the phases it logs
    kept = []  # every forward's replicas, kept alive so their ids stay unique
    for step, (xb, yb) in enumerate(timer.data([(x, y)] * (PARAM.timing_repeats + 1))):  # the first: warm-up
        with timer.phase("forward"):
            loss = F.mse_loss(dp(xb), yb)
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step(); opt.zero_grad()
        timer.step(step, samples=len(xb), loss=loss)
        kept.extend(dp.last_replicas)
    timer.close()
    models[label] = {"hidden_width": width, "params": sum(p.numel() for p in model.parameters()),
                     "forwards": PARAM.timing_repeats + 1, "replicas_per_forward": len(dp.last_replicas),
                     "distinct_replica_objects": len({id(r) for r in kept})}
    print(f"{label}: {models[label]['distinct_replica_objects']} distinct replica objects over "
          f"{models[label]['forwards']} forwards")
run.finish(models=models)
