from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"DDP x{PARAM.world_size}: rank 1's batch does not fit at step 1, handled two ways (each launch "
      "starts its rank processes first)")
import mgpulab as lab
from mgpulab_scenarios import evidence, rank_fns
from mgpulab_scenarios.common import still
run = evidence.start("hangs/oom-ddp", world_size=PARAM.world_size, placement=PARAM.placement,
                     hang_timeout_s=PARAM.hang_timeout_s, device_memory_mib=PARAM.device_memory_mib, seed=PARAM.seed)
outcomes = {}
for action in ("raise", "skip_batch"):  # rank 1 runs out of (emulated) memory at step 1: it fails, or skips that batch
    with still("the DDP rank processes: starting (each imports torch first), then running"):
        result = lab.launch(rank_fns.ddp_oom_on_one_rank, PARAM.world_size, run_id=f"OOM on rank 1: {action}",
                            kwargs=dict(seed=PARAM.seed, d_in=8, rows=32, batch=8, oom_step=1, action=action,
                                        budget_mib=PARAM.device_memory_mib, emit=True),
                            hang_timeout_s=PARAM.hang_timeout_s, time_limit_s=60, timeout_s=60, placement=PARAM.placement)
    run.add_ranks(result)
    print(f"{action}: {result.status} after {result.duration_s:.1f} s - {result.summary}")
    outcomes[action] = {"status": result.status, "summary": result.summary, "seconds": result.duration_s,
                        "ranks": [{"rank": r.rank, "state": r.state, "where": r.where, "last_step": r.last_step,
                                   "error": r.error} for r in result.ranks]}
recorded = run.finish(outcomes=outcomes)
