from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"DDP x{PARAM.world_size} with the fault {PARAM.fault!r} (starting the rank processes first)")
import mgpulab as lab
from mgpulab_scenarios import evidence, rank_fns
from mgpulab_scenarios.common import still
run = evidence.start("hangs/fault", world_size=PARAM.world_size, placement=PARAM.placement, fault=PARAM.fault,
                     hang_timeout_s=PARAM.hang_timeout_s, sleep_s=PARAM.sleep_s, seed=PARAM.seed)
world_size = PARAM.world_size
label = {"none": "equal steps", "uneven_steps": "uneven steps", "skip_collective": "skipped collective",
         "slow_rank": "slow rank"}[PARAM.fault]
with still("the DDP rank processes: starting (each imports torch first), then running"):
    result = lab.launch(rank_fns.ddp_collective_fault, world_size, run_id=label,  # per-rank loss, tagged
                        kwargs=dict(seed=PARAM.seed, d_in=8, rows=32, batch=8, fault=PARAM.fault, fix="none",
                                    sleep_s=PARAM.sleep_s, emit=True),
                        hang_timeout_s=PARAM.hang_timeout_s, time_limit_s=60, timeout_s=60, placement=PARAM.placement)
run.add_ranks(result)
print(result.status, "-", result.summary)
for r in result.ranks:
    print(f"rank {r.rank}: {r.state}, last step {r.last_step}, in {r.where}")
recorded = run.finish(status=result.status, summary=result.summary, seconds=result.duration_s,
                      ranks=[{"rank": r.rank, "state": r.state, "last_step": r.last_step, "where": r.where, "error": r.error,
                              "stack": r.stack} for r in result.ranks])
