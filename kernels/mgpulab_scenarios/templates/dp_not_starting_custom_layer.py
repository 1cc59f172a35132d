from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import torch, mgpulab as lab
from torch import nn
kind = PARAM.weight_kind
class CustomLayer(nn.Module):
    def __init__(self, i, h):
        super().__init__()
        w = torch.randn(i, h, device=lab.devices.device(0, PARAM.placement))  # a plain tensor stays there
        if kind == "parameter": self.weight = nn.Parameter(w)
        elif kind == "buffer": self.register_buffer("weight", w)
        else: self.weight = w
    def forward(self, x):
        return torch.matmul(x, self.weight)
model = lab.DataParallel(nn.Sequential(CustomLayer(100, 50), nn.Linear(50, 50)).to(lab.devices.device(0, PARAM.placement)),
                         device_ids=list(range(PARAM.devices)), placement=PARAM.placement, keep_replicas=True)
try:
    model(torch.randn(32, 100)).sum().backward()
    print("ran on", model.last_phases.samples, "rows per device")
    print(lab.replica_state(model).render())
except Exception as err:
    print("FAILED:", err)
