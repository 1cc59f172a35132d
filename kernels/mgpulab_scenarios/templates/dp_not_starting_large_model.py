from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"Timing {PARAM.num_steps} steps after a warm-up of a {PARAM.input_size}->{PARAM.hidden_size} model, "
      f"batch {PARAM.batch_size}, on 1 to {PARAM.devices} devices" + (", then DDP" if PARAM.devices > 1 else ""))
import torch, torch.nn.functional as F, mgpulab as lab
from mgpulab_scenarios import evidence, rank_fns
from mgpulab_scenarios.common import still
from mgpulab_scenarios.common import data, mlp  # one batch and one model for every variant, the DDP ranks' too
run = evidence.start("dp-not-starting/large-model", devices=PARAM.devices, placement=PARAM.placement,
                     input_size=PARAM.input_size, hidden_size=PARAM.hidden_size, batch_size=PARAM.batch_size,
                     num_steps=PARAM.num_steps, seed=PARAM.seed)
devices, steps, dev = PARAM.devices, PARAM.num_steps + 1, lab.devices.device(0, PARAM.placement)  # + a warm-up step
x, y = data(PARAM.seed, PARAM.batch_size, PARAM.input_size, PARAM.input_size, to=dev)
for n in range(1, devices + 1):
    label = "1 device" if n == 1 else f"DataParallel x{n}"
    # the article's LargeModel: Linear(i, h), ReLU, Linear(h, h), ReLU, Linear(h, h), ReLU, Linear(h, i)
    model = mlp(PARAM.seed, PARAM.input_size, PARAM.hidden_size, PARAM.input_size, layers=4, to=dev)
    m = model if n == 1 else lab.DataParallel(model, device_ids=list(range(n)), placement=PARAM.placement)
    opt = torch.optim.Adam(m.parameters())
    timer = lab.StepTimer(m, run_id=label)  # DataParallel's scatter / replicate / gather are phases it logs
    for step, (xb, yb) in enumerate(timer.data([(x, y)] * steps)):
        with timer.phase("forward"):
            loss = F.mse_loss(m(xb), yb)
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step(); opt.zero_grad()
        timer.step(step, samples=PARAM.batch_size, loss=loss)
        print(f"{label}, step {step}/{steps - 1}{' (warm-up)' if step == 0 else ''} done")
    timer.close()
if devices > 1:  # the same model and batch on DDP ranks, one shard each
    print(f"starting {devices} DDP rank processes (each imports torch first: seconds on a busy host)")
    with still("the DDP rank processes: starting (each imports torch first), then running"):
        result = lab.launch(rank_fns.ddp_train, devices, run_id=f"DDP x{devices}", placement=PARAM.placement,
                            kwargs=dict(seed=PARAM.seed, batch=PARAM.batch_size, d_in=PARAM.input_size,
                                        d_out=PARAM.input_size, hidden=PARAM.hidden_size, layers=4, steps=steps,
                                        lr=0.001, optimizer="adam", emit=True),
                            timeout_s=60, time_limit_s=120, hang_timeout_s=60)
    run.add_ranks(result)
for row in run.finish(params=sum(p.numel() for p in model.parameters()), steps_asked=steps)["variants"]:
    t = row["step_ms"]
    print(f"{row['tag']:>16}: " + (f"{t['median']:.2f} ms/step (median; min {t['min']:.2f}, max {t['max']:.2f})"
                                   if t else "no result")
          + (f", transfers {100 * row['transfer_share']:.0f}% of the step" if row.get("transfer_share") else ""))
