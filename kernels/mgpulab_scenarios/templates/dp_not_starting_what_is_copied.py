from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"One forward and backward of a 4-layer model on DataParallel x{PARAM.devices}: what each replica gets")
import torch, torch.nn.functional as F, mgpulab as lab
from mgpulab_scenarios import evidence
from mgpulab_scenarios.common import mlp, replica_parameters
run = evidence.start("dp-not-starting/what-is-copied", devices=PARAM.devices, placement=PARAM.placement,
                     batch_size=PARAM.batch_size, seed=PARAM.seed)
dev = lab.devices.device(0, PARAM.placement)
model = mlp(PARAM.seed, 32, 32, 32, layers=4, to=dev)  # a small LargeModel: 4 Linear layers
dp = lab.DataParallel(model, device_ids=list(range(PARAM.devices)), placement=PARAM.placement, keep_replicas=True)
x = torch.randn(max(PARAM.batch_size, PARAM.devices), 32).to(dev)
out = dp(x)                          # what comes back from the replicas, gathered
loss = F.mse_loss(out, torch.zeros_like(out))  # computed once, after the gather
loss.backward()
total = sum(p.numel() for p in model.parameters())
held = [sum(t.numel() for t in replica_parameters(model, r)) for r in dp.last_replicas]
print("each replica holds", held, "of", total, "parameters; rows per replica:", dp.last_phases.samples)
print("gathered:", tuple(out.shape), "on", out.device, "- the loss:", tuple(loss.shape), "on", loss.device)
print("gradients land on:", sorted({str(p.grad.device) for p in model.parameters() if p.grad is not None}))
recorded = run.finish(model_params=total, params_per_replica=held, rows_per_replica=list(dp.last_phases.samples),
                      rows=x.shape[0], gathered_shape=list(out.shape), gathered_device=str(out.device),
                      loss_shape=list(loss.shape), loss_device=str(loss.device),
                      grad_devices=sorted({str(p.grad.device) for p in model.parameters() if p.grad is not None}),
                      params_device=str(next(model.parameters()).device),
                      replica_params_are_leaves=[all(t.is_leaf for t in replica_parameters(model, r)) for r in dp.last_replicas])
