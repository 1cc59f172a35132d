from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"DDP x{PARAM.world_size} with 10 and 20 rows per rank (starting the rank processes first)")
import mgpulab as lab
from mgpulab_scenarios import evidence, rank_fns
from mgpulab_scenarios.common import still
run = evidence.start("hangs/uneven-batches", world_size=PARAM.world_size, placement=PARAM.placement,
                     hang_timeout_s=PARAM.hang_timeout_s, seed=PARAM.seed)
world_size = PARAM.world_size
with still("the DDP rank processes: starting (each imports torch first), then running"):
    result = lab.launch(rank_fns.ddp_uneven_batches, world_size, run_id=f"DDP x{world_size}",
                        kwargs=dict(seed=PARAM.seed, d_in=100, steps=3, batches=[10, 20], emit=True),
                        hang_timeout_s=PARAM.hang_timeout_s, time_limit_s=60, placement=PARAM.placement)
run.add_ranks(result)
print(result.status, result.summary)
print([(r["rank"], r["rows"], r["diverged"]) for r in result.results if r])
recorded = run.finish(status=result.status, summary=result.summary, seconds=result.duration_s,
                      rows_per_rank=[r["rows"] for r in result.results if r],
                      diverged=sorted({name for r in result.results if r for name in r["diverged"]}),
                      rows_compared=next((r["rows_compared"] for r in result.results if r), 0))
