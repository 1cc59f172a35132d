from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import copy, torch, torch.nn.functional as F, mgpulab as lab
from torch import nn
devices, dev = PARAM.devices, lab.devices.device(0, PARAM.placement)
torch.manual_seed(PARAM.seed + 1)
single = nn.Sequential(nn.Linear(PARAM.d_in, PARAM.hidden), nn.ReLU(), nn.Linear(PARAM.hidden, 1)).to(dev)
wrapped = lab.DataParallel(copy.deepcopy(single), device_ids=list(range(devices)), placement=PARAM.placement)
g = torch.Generator().manual_seed(PARAM.seed)
x = torch.randn(PARAM.batch_size, PARAM.d_in, generator=g).to(dev)
y = torch.randn(PARAM.batch_size, 1, generator=g).to(dev)
for m in (single, wrapped):
    F.mse_loss(m(x), y).backward()
diff = max((a.grad - b.grad).abs().max().item() for a, b in zip(single.parameters(), wrapped.parameters()))
print("max |grad(1 device) - grad(DataParallel)|:", diff)
# same start, same data: train both and compare the loss curves
for label, m in (("1 device", single), (f"DataParallel x{devices}", wrapped)):
    opt = torch.optim.SGD(m.parameters(), lr=PARAM.lr)
    for step in range(PARAM.steps):
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        lab.log(step, loss=loss, run_id=label)
    print(f"{label}: loss {loss.item():.6f} at step {step}")
