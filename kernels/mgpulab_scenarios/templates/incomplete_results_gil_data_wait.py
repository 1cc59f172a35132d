from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import time, torch, torch.nn as nn, torch.nn.functional as F, mgpulab as lab
from torch.utils.data import DataLoader, Dataset
devices, dev = PARAM.devices, lab.devices.device(0, PARAM.placement)
class Slow(Dataset):
    def __init__(self, n): self.x, self.y = torch.randn(n, 10), torch.randn(n, 1)
    def __len__(self): return len(self.x)
    def __getitem__(self, i):
        time.sleep(PARAM.sample_cost_ms / 1000); return self.x[i], self.y[i]
for workers in sorted({0, PARAM.num_workers}):
    model = lab.DataParallel(nn.Linear(10, 1).to(dev), device_ids=list(range(devices)), placement=PARAM.placement)
    opt = torch.optim.SGD(model.parameters(), lr=PARAM.lr)
    timer = lab.StepTimer(model, run_id=f"num_workers={workers}")  # frames per step and device
    for step, (x, y) in enumerate(timer.data(DataLoader(Slow(400), batch_size=50, num_workers=workers))):
        with timer.phase("forward"):
            loss = F.mse_loss(model(x), y.to(dev))
        with timer.phase("backward"):
            loss.backward()
        with timer.phase("optimizer"):
            opt.step(); opt.zero_grad()
        timer.step(step, samples=len(x), loss=loss)
    timer.close()
    print("num_workers", workers, "data wait share:", round(timer.mean("data_ms") / timer.mean("step_ms"), 3))
