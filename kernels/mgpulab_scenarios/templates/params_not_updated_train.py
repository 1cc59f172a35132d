from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import torch, torch.nn as nn, torch.nn.functional as F, mgpulab as lab
devices, target, dev = PARAM.devices, PARAM.manual_target, lab.devices.device(0, PARAM.placement)
g = torch.Generator().manual_seed(PARAM.seed)
inputs = torch.randn(PARAM.batch_size, PARAM.input_size, generator=g).to(dev)
targets = torch.randn(PARAM.batch_size, PARAM.output_size, generator=g).to(dev)
for variant in ("1 device", "optimizer.step", "manual"):  # same seed, same data
    torch.manual_seed(PARAM.seed + 1)
    net = nn.Sequential(nn.Linear(PARAM.input_size, PARAM.output_size)).to(dev)
    model = net if variant == "1 device" else lab.DataParallel(net, device_ids=list(range(devices)),
                                                                placement=PARAM.placement, keep_replicas=True)
    opt = torch.optim.SGD(model.parameters(), lr=PARAM.lr)
    for step in range(PARAM.steps):
        loss = F.mse_loss(model(inputs), targets)
        model.zero_grad(); loss.backward()
        if variant != "manual":
            opt.step()
        else:
            with torch.no_grad():
                if target == "module_children":   # the article's "bad example"
                    for child in model.module.children():
                        for param in child.parameters():
                            if param.grad is not None:
                                param.data -= PARAM.lr * param.grad.data
                else:                               # really touching the replicas
                    for replica in model.last_replicas:
                        for name, _ in model.module.named_parameters():
                            t = replica
                            for part in name.split("."): t = getattr(t, part)
                            if t.grad is not None:
                                t.data -= PARAM.lr * t.grad.data
        norm = torch.sqrt(sum((p.detach() ** 2).sum() for p in net.parameters()))
        lab.log(step, loss=loss, param_norm=norm, run_id=variant)
    print(f"{variant:>14}: loss {loss.item():.5f}, parameter norm {norm.item():.5f} after {step + 1} steps")
