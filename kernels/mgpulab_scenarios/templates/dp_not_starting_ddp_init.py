from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"Starting {PARAM.devices} rank processes without a process group (each imports torch first)")
import mgpulab as lab
from mgpulab_scenarios import evidence, rank_fns
from mgpulab_scenarios.common import still
run = evidence.start("dp-not-starting/ddp-init", devices=PARAM.devices, seed=PARAM.seed)
# rank processes WITHOUT a process group: each builds DDP first as is, then after init_process_group
with still("the DDP rank processes: starting (each imports torch first), then running"):
    result = lab.launch(rank_fns.ddp_without_init, PARAM.devices, init_process_group=False, placement="cpu",
                        kwargs=dict(seed=PARAM.seed, d_in=8, batch=4), time_limit_s=60)
print(result.status, "-", result.summary)
for r in result.results:
    if r:
        print(f"rank {r['rank']}: without init_process_group ->", r["without_init"]["error"] or "built")
        print(f"rank {r['rank']}: after init_process_group ->", r["with_init"]["error"] or "built, one step ran")
recorded = run.finish(status=result.status, summary=result.summary, seconds=result.duration_s,
                      ranks=[r for r in result.results if r])
