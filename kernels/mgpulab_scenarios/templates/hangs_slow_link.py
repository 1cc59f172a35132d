from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"DDP x{PARAM.world_size} with {PARAM.comm_delay_ms} ms added to every gradient all-reduce (starting the "
      "rank processes first)")
import mgpulab as lab
from mgpulab_scenarios import evidence, rank_fns
from mgpulab_scenarios.common import still
run = evidence.start("hangs/slow-link", world_size=PARAM.world_size, placement=PARAM.placement,
                     comm_delay_ms=PARAM.comm_delay_ms, steps=PARAM.steps, seed=PARAM.seed)
world_size = PARAM.world_size
# The ranks log under "baseline" and "delayed": the charts say what those ran on (and what their memory measures).
for tag in ("baseline", "delayed"):
    lab.metrics.publish_plan(lab.devices.detect(world_size, "DDP", placement=PARAM.placement), run_id=tag)
with still("the DDP rank processes: starting (each imports torch first), then running"):
    result = lab.launch(rank_fns.ddp_comm, world_size,  # frames tagged "baseline" and "delayed", per rank
                        kwargs=dict(seed=PARAM.seed, batch=64, d_in=16, hidden=64, steps=PARAM.steps,
                                    comm_delay_ms=PARAM.comm_delay_ms, emit=True),
                        hang_timeout_s=30, placement=PARAM.placement)
run.add_ranks(result)
for r in result.results:
    if r:
        print(f"rank {r['rank']}: comm share {r['baseline']['comm_share']:.2f} -> {r['delayed']['comm_share']:.2f}")
recorded = run.finish(status=result.status, summary=result.summary, seconds=result.duration_s, backend=result.backend)
