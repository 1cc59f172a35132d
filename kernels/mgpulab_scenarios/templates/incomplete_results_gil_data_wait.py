from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"Training from a loader whose samples cost {PARAM.sample_cost_ms} ms each, with num_workers=0"
      + (f" and {PARAM.num_workers}" if PARAM.num_workers else ""))
import time, torch, torch.nn as nn, torch.nn.functional as F, mgpulab as lab
from torch.utils.data import DataLoader, Dataset
from mgpulab_scenarios import evidence
run = evidence.start("incomplete-results-gil/data-wait", devices=PARAM.devices, placement=PARAM.placement,
                     lr=PARAM.lr, num_workers=PARAM.num_workers, sample_cost_ms=PARAM.sample_cost_ms)
devices, dev = PARAM.devices, lab.devices.device(0, PARAM.placement)
class Slow(Dataset):
    def __init__(self, n): self.x, self.y = torch.randn(n, 10), torch.randn(n, 1)
    def __len__(self): return len(self.x)
    def __getitem__(self, i):
        time.sleep(PARAM.sample_cost_ms / 1000); return self.x[i], self.y[i]
rows = {}
for workers in sorted({0, PARAM.num_workers}):
    label = f"num_workers={workers}"
    model = lab.DataParallel(nn.Linear(10, 1).to(dev), device_ids=list(range(devices)), placement=PARAM.placement)
    opt = torch.optim.SGD(model.parameters(), lr=PARAM.lr)
    timer = lab.StepTimer(model, run_id=label)  # frames per step and device
    rows[label] = {"rows_in": 0, "rows_out": 0}
    for step, (x, y) in enumerate(timer.data(DataLoader(Slow(400), batch_size=50, num_workers=workers))):
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
