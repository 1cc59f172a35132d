from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"DataParallel x{PARAM.devices}: a forward, a change to one replica's weight, the next forward")
import torch, torch.nn as nn, mgpulab as lab
from mgpulab_scenarios import evidence
from mgpulab_scenarios.common import replica_parameters
run = evidence.start("params-not-updated/overwrite", devices=PARAM.devices, placement=PARAM.placement,
                     batch_size=PARAM.batch_size, input_size=PARAM.input_size, output_size=PARAM.output_size,
                     seed=PARAM.seed)
dev = lab.devices.device(0, PARAM.placement)
torch.manual_seed(PARAM.seed + 1)
net = nn.Sequential(nn.Linear(PARAM.input_size, PARAM.output_size)).to(dev)
model = lab.DataParallel(net, device_ids=list(range(PARAM.devices)), placement=PARAM.placement, keep_replicas=True)
print("after wrapping: model.module is the original:", model.module is net, "- replicas:", len(model.last_replicas))
at_wrap = len(model.last_replicas)
x = torch.randn(PARAM.batch_size, PARAM.input_size).to(dev)
with torch.no_grad():
    model(x)
replicas = list(model.last_replicas)
held = [sum(t.numel() for t in replica_parameters(net, r)) for r in replicas]
print("after one forward:", len(replicas), "replicas holding", held, "of", sum(p.numel() for p in net.parameters()),
      "parameters")
last = len(replicas) - 1  # edit the last replica's weight, then run the next forward
before = net[0].weight.detach().clone()
with torch.no_grad():
    replica_parameters(net, replicas[last])[0].add_(1.0)
    edit = (replica_parameters(net, replicas[last])[0] - before).abs().max().item()
    model(x)
after = replica_parameters(net, model.last_replicas[last])[0]
print(f"replica {last}'s weight moved by {edit}; after the next forward it differs from the primary by",
      (after - net[0].weight).abs().max().item())
print(lab.replica_state(model).render())
recorded = run.finish(replicas_at_wrap=at_wrap, module_is_original=model.module is net, replicas_per_forward=len(replicas),
                      params_per_replica=held, model_params=sum(p.numel() for p in net.parameters()), edited_replica=last,
                      edit_size=edit, replica_diff_from_original_after_next_forward=(after - net[0].weight).abs().max().item(),
                      original_changed_by=(net[0].weight - before).abs().max().item(),
                      diverged_rows_after_next_forward=[row.name for row in lab.replica_state(model).diverged()])
