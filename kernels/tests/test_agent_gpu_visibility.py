"""Discovered GPUs are the ones CUDA_VISIBLE_DEVICES lets the agent use (a Slurm job's), by index or UUID prefix."""
from mgpulab_agent.host import only_visible

GPUS = [
    {"index": 0, "uuid": "GPU-aaaa-0000", "name": "H100", "memoryTotalMiB": 81559},
    {"index": 1, "uuid": "GPU-bbbb-1111", "name": "H100", "memoryTotalMiB": 81559},
    {"index": 2, "uuid": "MIG-cccc-2222", "name": "H100 MIG 1g.10gb", "memoryTotalMiB": 9728},
]


def test_unset_keeps_every_gpu() -> None:
    assert only_visible(list(GPUS), None) == GPUS


def test_indexes_in_the_order_given() -> None:
    assert [gpu["index"] for gpu in only_visible(list(GPUS), "2,0")] == [2, 0]


def test_uuids_and_prefixes() -> None:
    assert [gpu["index"] for gpu in only_visible(list(GPUS), "GPU-bbbb-1111, MIG-cccc")] == [1, 2]


def test_empty_hides_all() -> None:
    assert only_visible(list(GPUS), "") == []


def test_unknown_names_give_nothing_and_duplicates_count_once() -> None:
    assert only_visible(list(GPUS), "7,GPU-zzzz") == []
    assert [gpu["index"] for gpu in only_visible(list(GPUS), "1,1,GPU-bbbb")] == [1]
