from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"A batch of {PARAM.oom_batch_size} rows on DataParallel x{PARAM.world_size}, against {PARAM.device_memory_mib} "
      "MiB per device")
import time, torch, torch.nn as nn, mgpulab as lab
from mgpulab_scenarios import evidence
from mgpulab_scenarios.common import check_budget, EmulatedOOM, mlp_bytes_per_device
run = evidence.start("hangs/oom", world_size=PARAM.world_size, placement=PARAM.placement,
                     hang_timeout_s=PARAM.hang_timeout_s, oom_batch_size=PARAM.oom_batch_size,
                     device_memory_mib=PARAM.device_memory_mib)
model = lab.DataParallel(nn.Linear(100, 10).to(lab.devices.device(0, PARAM.placement)),
                         device_ids=list(range(PARAM.world_size)), placement=PARAM.placement)
batch_size = PARAM.oom_batch_size
rows = [len(c) for c in torch.empty(batch_size).chunk(PARAM.world_size)]
print(f"a rank silent for {PARAM.hang_timeout_s} s would count as hung")
t0, error = time.perf_counter(), None
try:
    check_budget(model.module, rows, budget_mib=PARAM.device_memory_mib)  # emulated device memory
    with torch.no_grad():
        output = model(torch.randn(batch_size, 100).to(lab.devices.device(0, PARAM.placement)))
    print("fits:", tuple(output.shape))
except EmulatedOOM as err:
    error = str(err)
    print(f"after {time.perf_counter() - t0:.4f} s:", err)
seconds = time.perf_counter() - t0
recorded = run.finish(rows_per_device=rows, error=error, seconds_to_outcome=seconds,
                      need_mib_per_device=[mlp_bytes_per_device(model.module, r)["total"] / 2 ** 20 for r in rows],
                      fixed_bytes=mlp_bytes_per_device(model.module, 0)["total"],
                      bytes_per_row=mlp_bytes_per_device(model.module, 1)["activations"])
