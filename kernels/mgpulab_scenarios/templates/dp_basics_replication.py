from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import torch, mgpulab as lab
from torch import nn
devices = PARAM.devices
model = nn.Sequential(nn.Linear(PARAM.d_in, PARAM.hidden), nn.ReLU(), nn.Linear(PARAM.hidden, 1))
dp = lab.DataParallel(model.to(lab.devices.device(0, PARAM.placement)), device_ids=list(range(devices)),
                      placement=PARAM.placement, keep_replicas=True)
kept = []  # keep replicas alive so their ids stay unique
for i in range(3):
    dp(torch.randn(PARAM.batch_size, PARAM.d_in))
    kept.extend(dp.last_replicas)
    lab.log(i, replicate_ms=dp.last_phases.replicate_ms, run_id=f"DataParallel x{devices}")
    print(f"forward {i}: replicate {dp.last_phases.replicate_ms:.3f} ms")
print("distinct replica objects over 3 forwards:", len({id(r) for r in kept}))
