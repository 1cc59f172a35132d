"""Scenario incomplete-results-gil: its small run, the large-batches verdict across batch sizes and noise,
and the data-wait cell's DataLoader workers."""
from __future__ import annotations

from scenario_helpers import claim as _claim, check_every_claim_has_a_verdict_from_its_numbers, timing as _timing

SCENARIO = "incomplete-results-gil"  # the small run (conftest's small_run fixture) runs this one


def test_runs_headless_and_every_claim_has_a_verdict_from_its_numbers(small_run):
    check_every_claim_has_a_verdict_from_its_numbers(SCENARIO, small_run)


def test_large_batches_verdict_follows_the_relative_overhead_across_batch_sizes_and_the_noise():
    large = _claim("incomplete-results-gil", "large-batches").verdict

    def sweep(*ratios, spread=0.05):
        rows = []
        for k, r in enumerate(ratios):
            rows.append({"rows": 10 * 8 ** k, "one_ms": _timing(1.0, 1.05, 0.95), "dp_ms": _timing(r, r + 0.05, r - 0.05),
                         "ratio": r, "ratio_spread": _timing(r, r + spread, r - spread)})
        return {"devices": 2, "forward_kind": "python", "depth": 4, "batch_size": 10, "batch_sweep": rows}

    assert large(sweep(1.5, 2.0, 3.0))[0] == "holds"
    assert large(sweep(1.5, 3.5, 3.0))[0] == "partly"  # up overall, not steadily
    value, text = large(sweep(4.0, 1.6, 0.7))
    assert value == "does-not-hold" and "shrinks" in text
    value, text = large(sweep(1.5, 1.55, 1.6, spread=0.5))  # the ratios' spread exceeds the change
    assert value == "inconclusive" and "spread" in text
    assert large(dict(sweep(1.5, 2.0, 3.0), devices=1))[0] == "inconclusive"


def test_data_wait_workers_come_from_a_forkserver_that_can_load_the_rows():
    """On a GPU host the cell's process has a CUDA context: its DataLoader workers then come from a forkserver
    (forked ones abort there), which must be able to import the dataset. Checked here with the forkserver."""
    import torch
    from torch.utils.data import DataLoader

    from mgpulab_scenarios.common import SlowRows, worker_context
    assert worker_context(0) is None
    assert worker_context(2) == ("forkserver" if torch.cuda.is_initialized() else None)
    loader = DataLoader(SlowRows(40, 0.0), batch_size=10, num_workers=2, multiprocessing_context="forkserver")
    batches = list(loader)
    assert [len(x) for x, _ in batches] == [10, 10, 10, 10]
    assert torch.equal(torch.cat([x for x, _ in batches]), SlowRows(40, 0.0).x)
