from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import torch, torch.nn as nn, mgpulab as lab
from torch.utils.data import DataLoader, TensorDataset
devices, dev = PARAM.devices, lab.devices.device(0, PARAM.placement)
torch.manual_seed(PARAM.seed)
data, labels = torch.randn(PARAM.samples, 10), torch.randn(PARAM.samples, 1)
loader = DataLoader(TensorDataset(data, labels), batch_size=PARAM.batch_size)
for label in ("1 device", f"DataParallel x{devices}"):  # same seed, same data
    torch.manual_seed(PARAM.seed + 1)
    net = nn.Linear(10, 1).to(dev)
    model = net if label == "1 device" else lab.DataParallel(net, device_ids=list(range(devices)),
                                                              placement=PARAM.placement)
    opt = torch.optim.SGD(model.parameters(), lr=PARAM.lr)
    rows_in = rows_out = 0
    for epoch in range(PARAM.epochs):
        for i, (inputs, targets) in enumerate(loader):
            inputs, targets = inputs.to(dev), targets.to(dev)
            outputs = model(inputs)
            rows_in += len(inputs); rows_out += int(torch.isfinite(outputs).all(dim=1).sum())
            loss = nn.MSELoss()(outputs, targets)
            opt.zero_grad(); loss.backward(); opt.step()
            lab.log(epoch * len(loader) + i, loss=loss, samples=len(inputs), run_id=label)
    print(f"{label}: complete outputs {rows_out}/{rows_in} = {100 * rows_out / rows_in:.1f}%, final loss {loss.item():.6f}")
