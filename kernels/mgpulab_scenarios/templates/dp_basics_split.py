from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"Scattering a batch of {PARAM.batch_size} rows over {PARAM.devices} devices: "
      f"a warm-up forward, then {PARAM.timing_repeats} timed ones")
import torch, mgpulab as lab
from torch import nn
from mgpulab_scenarios import evidence
run = evidence.start("dp-basics/split", batch_size=PARAM.batch_size, devices=PARAM.devices, placement=PARAM.placement,
                     hidden=PARAM.hidden, d_in=PARAM.d_in, timing_repeats=PARAM.timing_repeats)
batch_size, devices = PARAM.batch_size, PARAM.devices
model = nn.Sequential(nn.Linear(PARAM.d_in, PARAM.hidden), nn.ReLU(), nn.Linear(PARAM.hidden, 1))
dp = lab.DataParallel(model.to(lab.devices.device(0, PARAM.placement)), device_ids=list(range(devices)),
                      placement=PARAM.placement)
print(dp.device_mode.label)
x = torch.randn(batch_size, PARAM.d_in)
intervals = []  # when each replica's forward ran, per forward
with torch.no_grad():
    for step in range(PARAM.timing_repeats + 1):  # the same forward, repeated; the first is a warm-up
        out = dp(x)
        phases = dp.last_phases
        intervals.append(phases.intervals)
        print(f"forward {step}/{PARAM.timing_repeats}{' (warm-up)' if step == 0 else ''}: rows per device "
              f"{list(phases.samples)}, output {tuple(out.shape)}")
        for i, rows in enumerate(phases.samples):  # one bar per device
            lab.log(step, rank=i, run_id=f"DataParallel x{devices}", samples=rows, apply_ms=phases.apply_ms[i],
                    memory_mib=phases.memory_bytes[i] / 2 ** 20)
print("samples per device:", phases.samples)
print("gathered output:", tuple(out.shape), "on device", dp.output_device)
print("tracked bytes per device:", phases.memory_bytes)
recorded = run.finish(gathered_rows=out.shape[0], output_device=dp.output_device, output_bytes=out.numel() * out.element_size(),
                      replica_intervals=intervals, threads=phases.threads)
