from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"Timing training steps on 1 to {PARAM.devices} devices, {PARAM.timing_repeats} timed steps after a "
      f"warm-up each" + (", then DDP" if PARAM.compare_ddp else ""))
import torch, torch.nn.functional as F, mgpulab as lab
from mgpulab_scenarios import evidence, rank_fns
from mgpulab_scenarios.common import still
from mgpulab_scenarios.common import data, mlp  # one batch and one model for every variant, the DDP ranks' too
run = evidence.start("dp-basics/scaling", batch_size=PARAM.batch_size, devices=PARAM.devices, placement=PARAM.placement,
                     hidden=PARAM.hidden, d_in=PARAM.d_in, lr=PARAM.lr, seed=PARAM.seed,
                     timing_repeats=PARAM.timing_repeats, compare_ddp=PARAM.compare_ddp)
devices, steps = PARAM.devices, PARAM.timing_repeats + 1  # the first step is a warm-up
dev = lab.devices.device(0, PARAM.placement)
x, y = data(PARAM.seed, PARAM.batch_size, PARAM.d_in, to=dev)
for n in range(1, devices + 1):
    label = "1 device" if n == 1 else f"DataParallel x{n}"
    model = mlp(PARAM.seed, PARAM.d_in, PARAM.hidden, to=dev)  # Linear(d_in, hidden), ReLU, Linear(hidden, 1)
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
        print(f"{label}, step {step}/{steps - 1}{' (warm-up)' if step == 0 else ''} done")
    timer.close()
if PARAM.compare_ddp and devices > 1:  # the same batch on DDP ranks (processes), one shard each
    print(f"starting {devices} DDP rank processes (each imports torch first: seconds on a busy host)")
    with still("the DDP rank processes: starting (each imports torch first), then running"):
        result = lab.launch(rank_fns.ddp_train, devices, run_id=f"DDP x{devices}", placement=PARAM.placement,
                            kwargs=dict(seed=PARAM.seed, batch=PARAM.batch_size, d_in=PARAM.d_in, hidden=PARAM.hidden,
                                        steps=steps, lr=PARAM.lr, emit=True),
                            timeout_s=60, time_limit_s=120, hang_timeout_s=30)
    run.add_ranks(result)  # the ranks' own metric frames, as they sent them
for row in run.finish()["variants"]:  # the numbers the charts and the verdicts use
    t = row["step_ms"]
    print(f"{row['tag']:>16}: " + (f"{t['median']:.3f} ms/step (median; min {t['min']:.3f}, max {t['max']:.3f}), "
                                   f"speed-up x{row['speedup']:.2f}" if t else "no result"))
