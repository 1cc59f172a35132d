from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"DataParallel x{PARAM.devices}: {PARAM.repeats} steps after a warm-up, noting when and on which thread "
      "each replica's gradients are computed")
import threading, time, torch, torch.nn as nn, torch.nn.functional as F, mgpulab as lab
from mgpulab_scenarios import evidence
from mgpulab_scenarios.common import replica_parameters
run = evidence.start("incomplete-results-gil/backward", devices=PARAM.devices, placement=PARAM.placement,
                     batch_size=PARAM.batch_size, repeats=PARAM.repeats, lr=PARAM.lr, seed=PARAM.seed)
devices, dev = PARAM.devices, lab.devices.device(0, PARAM.placement)
torch.manual_seed(PARAM.seed)
model = nn.Sequential(*(nn.Sequential(nn.Linear(256, 256), nn.Tanh()) for _ in range(4))).to(dev)
dp = lab.DataParallel(model, device_ids=list(range(devices)), placement=PARAM.placement, keep_replicas=True)
opt = torch.optim.SGD(dp.parameters(), lr=PARAM.lr)
g = torch.Generator().manual_seed(PARAM.seed)
x, y = torch.randn(PARAM.batch_size, 256, generator=g).to(dev), torch.randn(PARAM.batch_size, 256, generator=g).to(dev)
timer = lab.StepTimer(dp, run_id=f"DataParallel x{devices}")
backward, forward = [], []  # per step: when each replica's backward ran, and on which threads; its forward's span
for step, (xb, yb) in enumerate(timer.data([(x, y)] * (PARAM.repeats + 1))):  # the first step is a warm-up
    with timer.phase("forward"):
        loss = F.mse_loss(dp(xb), yb)
    seen: dict = {}  # (replica, thread) -> the times autograd computed a gradient of one of its parameters there
    hooks = []
    for i, replica in enumerate(dp.last_replicas):
        for t in replica_parameters(model, replica):
            hooks.append(t.register_hook(lambda grad, i=i, seen=seen: seen.setdefault(
                (i, threading.current_thread().name), []).append(time.perf_counter())))
    t0 = time.perf_counter()
    with timer.phase("backward"):
        loss.backward()
    for hook in hooks:
        hook.remove()
    with timer.phase("optimizer"):
        opt.step(); opt.zero_grad()
    timer.step(step, samples=len(xb), loss=loss)
    print(f"step {step}/{PARAM.repeats}{' (warm-up)' if step == 0 else ''} done")
    backward.append([[i, thread, min(times) - t0, max(times) - t0] for (i, thread), times in sorted(seen.items())])
    forward.append([list(span) for span in dp.last_phases.intervals])
timer.close()
print("replica forwards (s):", forward[-1], "on", dp.last_phases.threads)
print("replica backwards (replica, thread, from s, to s):", backward[-1])
recorded = run.finish(backward=backward, forward=forward, forward_threads=list(dp.last_phases.threads),
                      optimizer_devices=sorted({str(p.device) for group in opt.param_groups for p in group["params"]}),
                      optimizer_tensors=sum(len(group["params"]) for group in opt.param_groups),
                      main_thread=threading.main_thread().name)
