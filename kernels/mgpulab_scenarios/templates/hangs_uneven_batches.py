from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import mgpulab as lab
from mgpulab_scenarios import rank_fns
world_size = PARAM.world_size
result = lab.launch(rank_fns.ddp_uneven_batches, world_size, run_id=f"DDP x{world_size}",
                    kwargs=dict(seed=PARAM.seed, d_in=100, steps=3, batches=[10, 20], emit=True),
                    hang_timeout_s=PARAM.hang_timeout_s, time_limit_s=60, placement=PARAM.placement)
print(result.status, result.summary)
print([(r["rank"], r["rows"], r["diverged"]) for r in result.results if r])
