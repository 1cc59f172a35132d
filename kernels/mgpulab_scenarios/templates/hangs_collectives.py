from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"One DataParallel x{PARAM.world_size} step here, then DDP x{PARAM.world_size} ranks counting their "
      "collectives")
import torch.distributed as dist, torch.nn.functional as F, mgpulab as lab
from mgpulab_scenarios import evidence, rank_fns
from mgpulab_scenarios.common import still
from mgpulab_scenarios.common import data, mlp
run = evidence.start("hangs/collectives", world_size=PARAM.world_size, placement=PARAM.placement, seed=PARAM.seed)
dev = lab.devices.device(0, PARAM.placement)
x, y = data(PARAM.seed, 64, 16, to=dev)
dp = lab.DataParallel(mlp(PARAM.seed, 16, 64, layers=3, to=dev), device_ids=list(range(PARAM.world_size)),
                      placement=PARAM.placement)
loss = F.mse_loss(dp(x), y)
seen, todo, nodes = {}, [loss.grad_fn], set()  # seen keeps each node object alive, so its id stays its own
while todo:  # the backward graph: how the replicas' gradients get back to the model
    fn = todo.pop()
    if fn is None or id(fn) in seen:
        continue
    seen[id(fn)] = fn; nodes.add(type(fn).__name__)
    todo.extend(next_fn for next_fn, _ in fn.next_functions)
loss.backward()
group = dist.is_available() and dist.is_initialized()
print("DataParallel: a process group in this process:", group, "- backward graph nodes:", sorted(nodes))
with still("the DDP rank processes: starting (each imports torch first), then running"):
    result = lab.launch(rank_fns.ddp_count_collectives, PARAM.world_size, run_id=f"DDP x{PARAM.world_size}",
                        kwargs=dict(seed=PARAM.seed, d_in=16, batch=64, steps=3, emit=True), placement=PARAM.placement,
                        timeout_s=60, time_limit_s=120)
run.add_ranks(result)
print(f"DDP x{PARAM.world_size}:", result.status, "- gradient all-reduces in the last step, per rank:",
      [r and r["buckets_last_step"] for r in result.results])
recorded = run.finish(dp_process_group=group, dp_backward_nodes=sorted(nodes), ddp_status=result.status,
                      ddp_summary=result.summary, ddp_backend=result.backend)
