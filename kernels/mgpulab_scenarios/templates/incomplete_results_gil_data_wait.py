from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"Training from a loader whose samples cost {PARAM.sample_cost_ms} ms each, with num_workers=0"
      + (f" and {PARAM.num_workers}" if PARAM.num_workers else ""))
import torch, torch.nn as nn, torch.nn.functional as F, mgpulab as lab
from torch.utils.data import DataLoader
from mgpulab_scenarios import evidence
from mgpulab_scenarios.common import SlowRows, worker_context  # each row costs sample_cost_ms to load
run = evidence.start("incomplete-results-gil/data-wait", devices=PARAM.devices, placement=PARAM.placement,
                     lr=PARAM.lr, num_workers=PARAM.num_workers, sample_cost_ms=PARAM.sample_cost_ms)
devices, dev = PARAM.devices, lab.devices.device(0, PARAM.placement)
rows = {}
for workers in sorted({0, PARAM.num_workers}):
    label = f"num_workers={workers}"
    model = lab.DataParallel(nn.Linear(10, 1).to(dev), device_ids=list(range(devices)), placement=PARAM.placement)
    opt = torch.optim.SGD(model.parameters(), lr=PARAM.lr)
    timer = lab.StepTimer(model, run_id=label)  # frames per step and device
    rows[label] = {"rows_in": 0, "rows_out": 0}
    # workers come from a forkserver once this process has used CUDA: forked ones would abort (see worker_context)
    loader = DataLoader(SlowRows(400, PARAM.sample_cost_ms), batch_size=50, num_workers=workers,
                        multiprocessing_context=worker_context(workers))
    for step, (x, y) in enumerate(timer.data(loader)):
        with timer.phase("forward"):
            out = model(x.to(dev))
            loss = F.mse_loss(out, y.to(dev))
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step(); opt.zero_grad()
        timer.step(step, samples=len(x), loss=loss)
        rows[label]["rows_in"] += len(x); rows[label]["rows_out"] += out.shape[0]
        print(f"{label}, step {step + 1}: {len(x)} rows")
    timer.close()
for label, row in run.finish(rows=rows)["workers"].items():
    print(label, "data wait share:", round(row["data_share"], 3), "rows out", row["rows_out"], "of", row["rows_in"])
