from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import mgpulab as lab
from mgpulab_scenarios import rank_fns
world_size = PARAM.world_size
label = {"none": "equal steps", "uneven_steps": "uneven steps", "skip_collective": "skipped collective",
         "slow_rank": "slow rank"}[PARAM.fault]
result = lab.launch(rank_fns.ddp_collective_fault, world_size, run_id=label,  # per-rank loss, tagged
                    kwargs=dict(seed=PARAM.seed, d_in=8, rows=32, batch=8, fault=PARAM.fault, fix="none",
                                sleep_s=PARAM.sleep_s, emit=True),
                    hang_timeout_s=PARAM.hang_timeout_s, time_limit_s=60, timeout_s=60, placement=PARAM.placement)
print(result.status, "-", result.summary)
for r in result.ranks:
    print(f"rank {r.rank}: {r.state}, last step {r.last_step}, in {r.where}")
