from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import time, torch, torch.nn as nn, mgpulab as lab
from mgpulab_scenarios.common import check_budget, EmulatedOOM
model = lab.DataParallel(nn.Linear(100, 10).to(lab.devices.device(0, PARAM.placement)),
                         device_ids=list(range(PARAM.world_size)), placement=PARAM.placement)
batch_size = PARAM.oom_batch_size
rows = [len(c) for c in torch.empty(batch_size).chunk(PARAM.world_size)]
t0 = time.perf_counter()
try:
    check_budget(model.module, rows, budget_mib=PARAM.device_memory_mib)  # emulated device memory
    output = model(torch.randn(batch_size, 100))
    print("fits:", tuple(output.shape))
except EmulatedOOM as err:
    print(f"after {time.perf_counter() - t0:.4f} s:", err)
