from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"DataParallel x{PARAM.devices}: {PARAM.timing_repeats} timed steps after a warm-up, at hidden "
      f"{PARAM.hidden} and at a 16 times wider hidden layer; then DDP for contrast")
import torch, torch.nn.functional as F, mgpulab as lab
from torch import nn
from mgpulab_scenarios import evidence, rank_fns
from mgpulab_scenarios.common import still
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
        print(f"{label}, step {step}/{PARAM.timing_repeats}{' (warm-up)' if step == 0 else ''}: "
              f"{len(dp.last_replicas)} replicas in this forward, {len({id(r) for r in kept})} distinct so far")
    timer.close()
    models[label] = {"hidden_width": width, "params": sum(p.numel() for p in model.parameters()),
                     "forwards": PARAM.timing_repeats + 1, "replicas_per_forward": len(dp.last_replicas),
                     "distinct_replica_objects": len({id(r) for r in kept})}
    print(f"{label}: {models[label]['distinct_replica_objects']} distinct replica objects over "
          f"{models[label]['forwards']} forwards")
ddp = None
if devices > 1:  # DDP for contrast: each rank's model object, step after step
    print(f"starting {devices} DDP rank processes (each imports torch first: seconds on a busy host)")
    with still("the DDP rank processes: starting (each imports torch first), then running"):
        result = lab.launch(rank_fns.ddp_replica_identity, devices, run_id=f"DDP x{devices}", placement=PARAM.placement,
                            kwargs=dict(seed=PARAM.seed, batch=PARAM.batch_size, d_in=PARAM.d_in, hidden=PARAM.hidden,
                                        steps=PARAM.timing_repeats + 1, lr=PARAM.lr),
                            timeout_s=60, time_limit_s=120, hang_timeout_s=30)
    ddp = [r for r in (result.results or []) if isinstance(r, dict)]
    for r in ddp:
        print(f"DDP rank {r['rank']}: {r['distinct_modules']} module object(s), {r['distinct_parameter_sets']} "
              f"parameter set(s) over {r['steps']} steps")
recorded = run.finish(models=models, ddp=ddp)
