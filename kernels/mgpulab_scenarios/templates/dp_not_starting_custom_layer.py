from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"CustomLayer under DataParallel x{PARAM.devices}, its weight held three ways")
import torch, mgpulab as lab
from torch import nn
from mgpulab_scenarios import evidence
run = evidence.start("dp-not-starting/custom-layer", devices=PARAM.devices, placement=PARAM.placement,
                     weight_kind=PARAM.weight_kind, seed=PARAM.seed)
dev = lab.devices.device(0, PARAM.placement)
class CustomLayer(nn.Module):
    def __init__(self, i, h, kind):
        super().__init__()
        w = torch.randn(i, h, device=dev)  # a plain tensor stays where it is made
        if kind == "parameter": self.weight = nn.Parameter(w)  # the article's choice
        elif kind == "buffer": self.register_buffer("weight", w)
        else: self.weight = w
    def forward(self, x):
        return torch.matmul(x, self.weight)
x = torch.randn(32, 100, generator=torch.Generator().manual_seed(PARAM.seed)).to(dev)
kinds = {}
for kind in ("parameter", "buffer", "plain_tensor"):  # the form's weight_kind is the one the question is about
    torch.manual_seed(PARAM.seed)
    single = nn.Sequential(CustomLayer(100, 50, kind), nn.Linear(50, 50)).to(dev)
    model = lab.DataParallel(single, device_ids=list(range(PARAM.devices)), placement=PARAM.placement)
    try:
        out = model(x)
        out.sum().backward()
        kinds[kind] = {"ok": True, "samples_per_device": list(model.last_phases.samples),
                       "max_diff_vs_single": (out - single(x)).abs().max().item()}
        print(f"{kind:>12}: ran on", model.last_phases.samples, "rows per device")
    except Exception as err:
        kinds[kind] = {"ok": False, "error": f"{type(err).__name__}: {' '.join(str(err).split())}"}
        print(f"{kind:>12}: FAILED:", err)
recorded = run.finish(kinds=kinds)
