from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"DDP x{PARAM.world_size}, the last rank in float64 (starting the rank processes first)")
import mgpulab as lab
from mgpulab_scenarios import evidence, rank_fns
from mgpulab_scenarios.common import still
run = evidence.start("hangs/dtype-mismatch", world_size=PARAM.world_size, placement=PARAM.placement,
                     hang_timeout_s=PARAM.hang_timeout_s, seed=PARAM.seed)
world_size = PARAM.world_size
# the last rank's model and batch are float64, the others' float32: same shapes, another dtype
with still("the DDP rank processes: starting (each imports torch first), then running"):
    result = lab.launch(rank_fns.ddp_dtype_mismatch, world_size, run_id="mixed dtypes",
                        kwargs=dict(seed=PARAM.seed, d_in=8, steps=3, batch=16, emit=True),
                        hang_timeout_s=PARAM.hang_timeout_s, time_limit_s=60, timeout_s=60, placement=PARAM.placement)
run.add_ranks(result)
print(result.status, "-", result.summary)
for r in result.ranks:
    print(f"rank {r.rank}: {r.state}, last step {r.last_step}, in {r.where}, error {r.error}")
recorded = run.finish(status=result.status, summary=result.summary, seconds=result.duration_s,
                      ranks=[{"rank": r.rank, "state": r.state, "last_step": r.last_step, "where": r.where,
                              "error": r.error or r.reason, "stack": r.stack} for r in result.ranks],
                      dtypes=[r.result["dtype"] if r.result else None for r in result.ranks],
                      diverged=sorted({name for r in result.results if r for name in r["diverged"]}))
