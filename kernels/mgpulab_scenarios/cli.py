"""Headless runner: ``python -m mgpulab_scenarios.cli <id|all|list> [--param name=value ...] [--json]``.

Runs each scenario as a participant would: its experiment cells, rendered with
the values, executed in this process in notebook order (they record their
evidence), then the verdicts computed from that evidence
(:mod:`mgpulab_scenarios.headless`).

Exit 0 when the scenario ran (whatever the verdicts), 2 on a bad id or bad
parameters (message on stderr, nothing run). While experiments run, fd 1 is
pointed at stderr so rank output and warnings never corrupt the JSON.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from typing import Any, Dict, Iterator, List, Optional

from . import IDS, ParameterError, UnknownScenario, get
from .headless import run_scenario
from .report import format_text


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[int]:
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield saved
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _parse_params(scenario_id: str, items: List[str]) -> Dict[str, Any]:
    scenario = get(scenario_id)
    names = {p.name for p in scenario.parameters}
    out: Dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ParameterError(f"--param expects name=value, got {item!r}")
        name, text = item.split("=", 1)
        name = name.strip()
        if name not in names:
            raise ParameterError(f"unknown parameter {name!r} for scenario {scenario_id!r} "
                                 f"(known: {', '.join(sorted(names))})")
        out[name] = scenario.parameter(name).parse(text)
    return scenario.validate(out)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="npm run scenario --", description="Run a Multi-GPU Lab scenario headless.")
    parser.add_argument("scenario", help=f"scenario id, 'all' or 'list' ({', '.join(IDS)})")
    parser.add_argument("--notebook", action="store_true", help="print the scenario as notebook cells (JSON) instead of running it")
    parser.add_argument("--param", "-p", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    if args.scenario == "list":
        if args.json:
            from . import get
            print(json.dumps([{k: get(i).to_dict()[k] for k in ("id", "title", "source", "sourceTitle", "summary")} for i in IDS]))
        else:
            print("\n".join(IDS))
        return 0
    ids = list(IDS) if args.scenario == "all" else [args.scenario]
    try:
        if args.scenario == "all" and args.param:
            raise ParameterError("--param applies to one scenario; run scenarios one at a time to set parameters")
        plans = [(i, _parse_params(i, args.param)) for i in ids]
    except (ParameterError, UnknownScenario) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.notebook:
        from . import notebook
        if len(plans) != 1:
            print("error: --notebook takes one scenario id", file=sys.stderr)
            return 2
        print(json.dumps(notebook(*plans[0])))
        return 0
    docs = []
    t0 = time.perf_counter()
    with _stdout_to_stderr() as real_stdout:
        for scenario_id, values in plans:
            doc = run_scenario(scenario_id, values)
            docs.append(doc)
            if not args.json:
                os.write(real_stdout, (format_text(doc) + "\n\n").encode())
    if args.json:
        out = docs if args.scenario == "all" else docs[0]
        sys.stdout.write(json.dumps(out, default=str) + "\n")
    else:
        sys.stdout.write(f"ran {len(docs)} scenario(s) in {time.perf_counter() - t0:.1f} s\n")
    sys.stdout.flush()
    failed = [f"{d['scenario']}/{e['id']}" for d in docs for e in d["experiments"] if e["error"]]
    if failed:
        print(f"error: experiment(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
