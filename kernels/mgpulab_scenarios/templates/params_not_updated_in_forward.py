from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"{PARAM.steps} forwards of a model that counts its calls, on one device and on DataParallel x{PARAM.devices}")
import torch, torch.nn as nn, mgpulab as lab
from mgpulab_scenarios import evidence
run = evidence.start("params-not-updated/in-forward", devices=PARAM.devices, placement=PARAM.placement,
                     batch_size=PARAM.batch_size, input_size=PARAM.input_size, output_size=PARAM.output_size,
                     steps=PARAM.steps)
devices, dev = PARAM.devices, lab.devices.device(0, PARAM.placement)
class Stateful(nn.Module):
    def __init__(self):
        super().__init__(); self.linear = nn.Linear(PARAM.input_size, PARAM.output_size)
        self.calls = 0; self.register_buffer("rows_seen", torch.zeros(()))
    def forward(self, x):
        self.calls = self.calls + 1; self.rows_seen.add_(x.shape[0])
        return self.linear(x)
for label in ("1 device", f"DataParallel x{devices}"):
    net = Stateful().to(dev)
    model = net if label == "1 device" else lab.DataParallel(net, device_ids=list(range(devices)),
                                                              placement=PARAM.placement, keep_replicas=True)
    for step in range(PARAM.steps):
        model(torch.randn(PARAM.batch_size, PARAM.input_size).to(dev))
        lab.log(step, calls=net.calls, rows_seen=net.rows_seen, run_id=label)
        print(f"{label}, forward {step + 1}/{PARAM.steps} done")
    print(f"{label}: calls {net.calls}, rows_seen {net.rows_seen.item():.0f}")
print(lab.replica_state(model).render())
recorded = run.finish(rows_per_device=list(model.last_phases.samples))
