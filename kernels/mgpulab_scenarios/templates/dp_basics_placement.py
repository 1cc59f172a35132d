from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print("Calling torch's own nn.DataParallel with the model and the input in different places")
import torch
from torch import nn
from mgpulab_scenarios import evidence
from mgpulab_scenarios.common import data, mlp
run = evidence.start("dp-basics/placement", batch_size=PARAM.batch_size, devices=PARAM.devices,
                     placement=PARAM.placement, hidden=PARAM.hidden, d_in=PARAM.d_in, seed=PARAM.seed)
# torch's own nn.DataParallel: where the model and the input must be is a CUDA question (on the CPU it is a no-op)
gpus = torch.cuda.device_count() if torch.cuda.is_available() and PARAM.placement == "auto" else 0
ids = list(range(min(PARAM.devices, gpus)))
x, _ = data(PARAM.seed, PARAM.batch_size, PARAM.d_in)  # made on the CPU
def attempt(forward):
    """What one forward did: its output's device, or the error it raised (first line)."""
    try:
        with torch.no_grad():
            out = forward()
        return {"ok": True, "output_device": str(out.device), "error": None}
    except Exception as err:  # the error is the measurement
        return {"ok": False, "output_device": None, "error": f"{type(err).__name__}: {str(err).splitlines()[0][:240]}"}
cases = {}
if gpus:
    cases["cpu_model"] = attempt(  # model on the CPU, wrapped; input on cuda:0
        lambda: nn.DataParallel(mlp(PARAM.seed, PARAM.d_in, PARAM.hidden), device_ids=ids)(x.cuda(0)))
    cases["moved_after_wrap"] = attempt(  # the same, the wrapper moved with .cuda() after wrapping
        lambda: nn.DataParallel(mlp(PARAM.seed, PARAM.d_in, PARAM.hidden), device_ids=ids).cuda(0)(x.cuda(0)))
    on_gpu = nn.DataParallel(mlp(PARAM.seed, PARAM.d_in, PARAM.hidden, to=torch.device("cuda", 0)), device_ids=ids)
    cases["cpu_input"] = attempt(lambda: on_gpu(x))  # model on cuda:0; input on the CPU
    if len(ids) > 1:
        cases["other_gpu_input"] = attempt(lambda: on_gpu(x.cuda(ids[-1])))  # input on the last GPU
    for case, seen in cases.items():
        print(f"{case}: " + (f"ran, output on {seen['output_device']}" if seen["ok"] else seen["error"]))
else:
    print("no CUDA GPU here (or placement is cpu): torch's DataParallel runs the module as is on the CPU, so where "
          "the model and input must be cannot be measured on this host")
recorded = run.finish(gpus=gpus, device_ids=ids, torch_version=torch.__version__, cases=cases)
