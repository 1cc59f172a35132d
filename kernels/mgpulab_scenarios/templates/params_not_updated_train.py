from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"Training three ways from the same start, {PARAM.steps} steps each")
import copy, torch, torch.nn as nn, torch.nn.functional as F, mgpulab as lab
from mgpulab_scenarios import evidence
run = evidence.start("params-not-updated/train", devices=PARAM.devices, placement=PARAM.placement,
                     batch_size=PARAM.batch_size, input_size=PARAM.input_size, output_size=PARAM.output_size,
                     steps=PARAM.steps, lr=PARAM.lr, manual_target=PARAM.manual_target, seed=PARAM.seed)
devices, target, dev = PARAM.devices, PARAM.manual_target, lab.devices.device(0, PARAM.placement)
g = torch.Generator().manual_seed(PARAM.seed)
inputs = torch.randn(PARAM.batch_size, PARAM.input_size, generator=g).to(dev)
targets = torch.randn(PARAM.batch_size, PARAM.output_size, generator=g).to(dev)
def norm(net):
    return float(torch.sqrt(sum((p.detach() ** 2).sum() for p in net.parameters())))
torch.manual_seed(PARAM.seed + 1)
start = nn.Sequential(nn.Linear(PARAM.input_size, PARAM.output_size)).to(dev)  # every variant starts here
final, applied = {}, {}
for variant in ("1 device", "optimizer.step", "manual"):  # same start, same data
    net = copy.deepcopy(start)
    model = net if variant == "1 device" else lab.DataParallel(net, device_ids=list(range(devices)),
                                                                placement=PARAM.placement, keep_replicas=True)
    opt = torch.optim.SGD(model.parameters(), lr=PARAM.lr)
    applied[variant] = 0
    for step in range(PARAM.steps):
        loss = F.mse_loss(model(inputs), targets)  # the mean over the whole batch, for every variant
        model.zero_grad(); loss.backward()
        if variant != "manual":
            opt.step()
        else:
            with torch.no_grad():
                if target == "module_children":   # the article's "bad example"
                    for child in model.module.children():
                        for param in child.parameters():
                            if param.grad is not None:
                                param.data -= PARAM.lr * param.grad.data; applied[variant] += 1
                else:                               # really touching the replicas
                    for replica in model.last_replicas:
                        for name, _ in model.module.named_parameters():
                            t = replica
                            for part in name.split("."): t = getattr(t, part)
                            if t.grad is not None:
                                t.data -= PARAM.lr * t.grad.data; applied[variant] += 1
        lab.log(step, loss=loss, param_norm=norm(net), run_id=variant)
        print(f"{variant}, step {step + 1}/{PARAM.steps}: loss {loss.item():.5f}, parameter norm {norm(net):.5f}")
    final[variant] = [p.detach().clone() for p in net.parameters()]
    print(f"{variant:>14}: loss {loss.item():.5f}, parameter norm {norm(net):.5f} after {step + 1} steps")
# one backward each from the same start: the primary model's gradient vs the full-batch gradient
one, primary = copy.deepcopy(start), copy.deepcopy(start)
F.mse_loss(one(inputs), targets).backward()
F.mse_loss(lab.DataParallel(primary, device_ids=list(range(devices)), placement=PARAM.placement)(inputs), targets).backward()
grad_diff = max((a.grad - b.grad).abs().max().item() for a, b in zip(one.parameters(), primary.parameters()))
print("max |grad(1 device) - grad(primary model under DataParallel)|:", grad_diff)
recorded = run.finish(initial_param_norm=norm(start), updates_applied=applied, dp_grad_vs_single_max_diff=grad_diff,
                      grad_scale=max(p.grad.abs().max().item() for p in one.parameters() if p.grad is not None),
                      optimizer_vs_single_max_param_diff=max((a - b).abs().max().item()
                                                              for a, b in zip(final["optimizer.step"], final["1 device"])))
