from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"One device and DataParallel x{PARAM.devices} from the same weights on the same batch of "
      f"{PARAM.batch_size} rows: one backward each, then {PARAM.steps} SGD steps each")
import copy, torch, torch.nn.functional as F, mgpulab as lab
from mgpulab_scenarios.common import replica_parameters
from torch import nn
from mgpulab_scenarios import evidence
run = evidence.start("dp-basics/equivalence", batch_size=PARAM.batch_size, devices=PARAM.devices,
                     placement=PARAM.placement, hidden=PARAM.hidden, d_in=PARAM.d_in, steps=PARAM.steps, lr=PARAM.lr,
                     seed=PARAM.seed)
devices, dev = PARAM.devices, lab.devices.device(0, PARAM.placement)
torch.manual_seed(PARAM.seed + 1)
start = nn.Sequential(nn.Linear(PARAM.d_in, PARAM.hidden), nn.ReLU(), nn.Linear(PARAM.hidden, 1)).to(dev)
g = torch.Generator().manual_seed(PARAM.seed)
x = torch.randn(PARAM.batch_size, PARAM.d_in, generator=g).to(dev)
y = torch.randn(PARAM.batch_size, 1, generator=g).to(dev)
def grads(m):
    return [p.grad.detach().clone() for p in m.parameters()]
def max_diff(a, b):
    return max((u - v).abs().max().item() for u, v in zip(a, b))
# one backward each, same start, same data
single, primary = copy.deepcopy(start), copy.deepcopy(start)
F.mse_loss(single(x), y).backward()
F.mse_loss(lab.DataParallel(primary, device_ids=list(range(devices)), placement=PARAM.placement)(x), y).backward()
print("max |grad(1 device) - grad(DataParallel)|:", max_diff(grads(single), grads(primary)))
# what each device would compute on its own chunk: averaging those mean-loss gradients, or summing each chunk's
# share of the full-batch loss
own, share = [], []
for cx, cy in zip(x.chunk(devices), y.chunk(devices)):
    m = copy.deepcopy(start); F.mse_loss(m(cx), cy).backward(); own.append(grads(m))
    m = copy.deepcopy(start); (F.mse_loss(m(cx), cy, reduction="sum") / len(x)).backward(); share.append(grads(m))
averaged = [sum(g) / len(own) for g in zip(*own)]
summed = [sum(g) for g in zip(*share)]
# same start, same data: train both and compare the loss curves
final = {}
trained = copy.deepcopy(start)  # the one model DataParallel trains
wrapped = lab.DataParallel(trained, device_ids=list(range(devices)), placement=PARAM.placement, keep_replicas=True)
for label, m in (("1 device", copy.deepcopy(start)), (f"DataParallel x{devices}", wrapped)):
    opt = torch.optim.SGD(m.parameters(), lr=PARAM.lr)
    for step in range(PARAM.steps):
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)  # the mean over the whole batch, for both variants
        loss.backward()
        opt.step()
        lab.log(step, loss=loss, run_id=label)
        print(f"{label}, step {step + 1}/{PARAM.steps}: loss {loss.item():.6f}")
    final[label] = [p.detach().clone() for p in m.parameters()]
    print(f"{label}: loss {loss.item():.6f} at step {step}")
# where optimizer.step ran: the tensors the optimizer updated, against the one model's and the last replicas'
held = [p for group in opt.param_groups for p in group["params"]]
replica_devices = sorted({str(t.device) for r in wrapped.last_replicas for t in replica_parameters(trained, r)})
updated = dict(optimizer_tensors=len(held), model_tensors=len(list(trained.parameters())),
               optimizer_holds_the_model={id(p) for p in held} == {id(p) for p in trained.parameters()},
               optimizer_devices=sorted({str(p.device) for p in held}), replica_devices=replica_devices,
               replicas=len(wrapped.last_replicas), device0=str(dev))
print(f"optimizer.step updated {len(held)} tensors on {updated['optimizer_devices']} (the model has "
      f"{updated['model_tensors']}); the last forward's {len(wrapped.last_replicas)} replicas were on {replica_devices}")
recorded = run.finish(chunk_rows=[len(c) for c in x.chunk(devices)], max_grad_diff=max_diff(grads(single), grads(primary)),
                      grad_scale=max(g.abs().max().item() for g in grads(single)),
                      max_grad_diff_vs_sum_of_device_grads=max_diff(summed, grads(primary)),
                      max_grad_diff_vs_mean_of_device_mean_grads=max_diff(averaged, grads(primary)),
                      max_param_diff_after_steps=max_diff(*final.values()), update=updated)
