from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import torch, mgpulab as lab
from torch import nn
batch_size, devices = PARAM.batch_size, PARAM.devices
model = nn.Sequential(nn.Linear(PARAM.d_in, PARAM.hidden), nn.ReLU(), nn.Linear(PARAM.hidden, 1))
dp = lab.DataParallel(model.to(lab.devices.device(0, PARAM.placement)), device_ids=list(range(devices)),
                      placement=PARAM.placement)
print(dp.device_mode.label)
out = dp(torch.randn(batch_size, PARAM.d_in))
print("samples per device:", dp.last_phases.samples)
print("gathered output:", tuple(out.shape), "on device", dp.output_device)
print("tracked bytes per device:", dp.last_phases.memory_bytes)
for i, rows in enumerate(dp.last_phases.samples):  # one bar per device
    lab.log(0, rank=i, run_id=f"DataParallel x{devices}", samples=rows,
            memory_mib=dp.last_phases.memory_bytes[i] / 2 ** 20)
