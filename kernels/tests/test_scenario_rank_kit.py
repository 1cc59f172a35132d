"""What every scenario rank function does the same way (mgpulab_scenarios.rank_fns.rank_kit), in one gloo rank."""
from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from mgpulab_scenarios import rank_fns
from mgpulab_scenarios.rank_fns import faults, training
from mgpulab_scenarios.rank_fns.rank_kit import Sent, ddp_on_rank_device, log_global_loss, shard
from mgpulab_wire import frames


@pytest.fixture
def one_rank(tmp_path):
    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def test_shard_gives_each_rank_its_chunk_and_an_empty_one_past_the_chunks():
    x = torch.arange(10).reshape(5, 2)
    assert shard(x, 0, 2).tolist() == [[0, 1], [2, 3], [4, 5]] and shard(x, 1, 2).shape[0] == 2
    assert shard(torch.arange(2), 3, 4).shape[0] == 0  # 2 rows on 4 ranks: torch.chunk makes 2 chunks


def test_sent_collects_the_metric_messages_sent_in_the_block_without_heartbeats_and_only_when_emitting():
    metric = {"type": "metric", "rank": 0, "step": 1, "values": {"loss": 1.0}}
    with Sent(True) as sent:
        frames.emit(metric)
        frames.emit({"type": "metric", "rank": 0, "step": 1, "values": {"heartbeat": 1}})
        frames.emit({"type": "status", "state": "idle"})
    frames.emit(metric)  # after the block: not collected
    assert sent == [metric]
    with Sent(False) as quiet:
        frames.emit(metric)
    assert quiet == []


def test_the_global_loss_is_the_rows_weighted_mean_and_the_model_is_wrapped_on_the_rank_s_device(one_rank):
    assert log_global_loss([torch.tensor(2.0), torch.tensor(4.0)], rows=3) == [2.0, 4.0]  # one rank: its own
    assert log_global_loss([], rows=3) == []
    model = ddp_on_rank_device(nn.Linear(2, 1))
    assert isinstance(model, DistributedDataParallel) and next(model.parameters()).device.type == "cpu"


def test_the_templates_still_find_every_rank_function_under_rank_fns():
    for name in rank_fns.__all__:
        function = getattr(rank_fns, name)
        assert function is getattr(training, name, None) or function is getattr(faults, name, None), name
