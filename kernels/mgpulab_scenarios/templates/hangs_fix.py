from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"DDP x{PARAM.world_size} with the fault {PARAM.fault!r} and the fix {PARAM.fix!r} (starting the rank "
      "processes first)")
import mgpulab as lab
from mgpulab_scenarios import evidence, rank_fns
from mgpulab_scenarios.common import still
run = evidence.start("hangs/fix", world_size=PARAM.world_size, placement=PARAM.placement, fault=PARAM.fault,
                     fix=PARAM.fix, hang_timeout_s=PARAM.hang_timeout_s, pg_timeout_s=PARAM.pg_timeout_s,
                     sleep_s=PARAM.sleep_s, seed=PARAM.seed)
fix, world_size = PARAM.fix, PARAM.world_size
with still("the DDP rank processes: starting (each imports torch first), then running"):
    result = lab.launch(rank_fns.ddp_collective_fault, world_size, run_id=f"fix: {fix}",
                        kwargs=dict(seed=PARAM.seed, d_in=8, rows=32, batch=8, fault=PARAM.fault,
                                    fix="none" if fix == "pg_timeout" else fix, sleep_s=PARAM.sleep_s, emit=True),
                        timeout_s=PARAM.pg_timeout_s if fix == "pg_timeout" else 60,
                        hang_timeout_s=max(PARAM.hang_timeout_s, PARAM.pg_timeout_s + 5) if fix == "pg_timeout" else PARAM.hang_timeout_s,
                        time_limit_s=60, placement=PARAM.placement)
run.add_ranks(result)
print(result.status, "-", result.summary)
print("steps per rank:", [r.result and r.result["steps"] for r in result.ranks])
recorded = run.finish(status=result.status, summary=result.summary, seconds=result.duration_s,
                      steps_per_rank=[r.result["steps"] if r.result else None for r in result.ranks])
