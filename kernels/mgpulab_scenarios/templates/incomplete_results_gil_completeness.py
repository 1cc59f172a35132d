from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"The article's Example 1 on one device, then on DataParallel x{PARAM.devices}: {PARAM.samples} rows, "
      f"batch {PARAM.batch_size}, {PARAM.epochs} epoch(s)")
import torch, torch.nn as nn, mgpulab as lab
from torch.utils.data import DataLoader, TensorDataset
from mgpulab_scenarios import evidence
run = evidence.start("incomplete-results-gil/completeness", devices=PARAM.devices, placement=PARAM.placement,
                     samples=PARAM.samples, batch_size=PARAM.batch_size, epochs=PARAM.epochs, lr=PARAM.lr,
                     seed=PARAM.seed)
devices, dev = PARAM.devices, lab.devices.device(0, PARAM.placement)
torch.manual_seed(PARAM.seed)
data, labels = torch.randn(PARAM.samples, 10), torch.randn(PARAM.samples, 1)
loader = DataLoader(TensorDataset(data, labels), batch_size=PARAM.batch_size)
rows, final = {}, {}
for label in ("1 device", f"DataParallel x{devices}"):  # same seed, same data
    torch.manual_seed(PARAM.seed + 1)
    net = nn.Linear(10, 1).to(dev)
    model = net if label == "1 device" else lab.DataParallel(net, device_ids=list(range(devices)),
                                                              placement=PARAM.placement)
    opt = torch.optim.SGD(model.parameters(), lr=PARAM.lr)
    rows[label] = {"rows_in": 0, "rows_out": 0, "nonfinite_outputs": 0}
    for epoch in range(PARAM.epochs):
        for i, (inputs, targets) in enumerate(loader):
            inputs, targets = inputs.to(dev), targets.to(dev)
            outputs = model(inputs)
            rows[label]["rows_in"] += len(inputs); rows[label]["rows_out"] += outputs.shape[0]
            rows[label]["nonfinite_outputs"] += int((~torch.isfinite(outputs)).sum())
            loss = nn.MSELoss()(outputs, targets)  # the mean over the whole batch, for both variants
            opt.zero_grad(); loss.backward(); opt.step()
            lab.log(epoch * len(loader) + i, loss=loss, samples=len(inputs), run_id=label)
            print(f"{label}, epoch {epoch + 1}, batch {i + 1}/{len(loader)}: loss {loss.item():.6f}")
    final[label] = [p.detach().clone() for p in net.parameters()]
    r = rows[label]
    print(f"{label}: complete outputs {r['rows_out']}/{r['rows_in']}, {r['nonfinite_outputs']} non-finite, "
          f"final loss {loss.item():.6f}")
recorded = run.finish(rows=rows, max_param_diff_vs_single=max((a - b).abs().max().item() for a, b in zip(*final.values())))
