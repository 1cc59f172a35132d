"""One summary of a GPU check (scripts/device-check.sh): every figure the check produced, and whether it passed.

``python3 scripts/device_summary.py OUT_DIR`` reads what device-check.sh wrote there: env.txt, gpus.txt,
pytest.txt/.rc, catalog-<scenario>.json/.err/.rc and bench.txt/.rc. Standard library only (the GPU host has
python3, not node). Exit 0 when the suite passed, every scenario ran with no experiment failed, and the
benchmark ran; 1 otherwise, with the reasons.
"""
from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from typing import Dict, List, Optional, Tuple

SCENARIOS = ("dp-basics", "dp-not-starting", "params-not-updated", "incomplete-results-gil", "hangs")


def _read(folder: str, name: str) -> str:
    try:
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def _rc(folder: str, name: str) -> Tuple[Optional[int], Optional[int]]:
    """(exit status, seconds) from a ``rc=N seconds=S`` file; None where it is missing."""
    match = re.search(r"rc=(\d+) seconds=(\d+)", _read(folder, name))
    return (int(match.group(1)), int(match.group(2))) if match else (None, None)


def _clip(text: str, limit: int = 240) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def suite(folder: str, problems: List[str]) -> List[str]:
    rc, seconds = _rc(folder, "pytest.rc")
    text = _read(folder, "pytest.txt")
    counts = next((line.strip("= ") for line in reversed(text.splitlines()) if re.search(r"\d+ (passed|failed)", line)),
                  "no pytest summary line")
    lines = [f"python suite: {counts} (exit {rc}, {seconds} s)"]
    failed = [line for line in text.splitlines() if line.startswith(("FAILED", "ERROR"))]
    lines += [f"  {_clip(line, 300)}" for line in failed[:30]]
    skipped = [line for line in text.splitlines() if line.startswith("SKIPPED")]
    lines += [f"  {_clip(line, 200)}" for line in skipped[:10]]
    if rc != 0:
        problems.append(f"the python suite did not pass (exit {rc}{': timed out' if rc == 124 else ''})")
    return lines


def catalog(folder: str, problems: List[str]) -> List[str]:
    lines = []
    total_claims, verdicts = 0, Counter()
    for scenario in SCENARIOS:
        rc, seconds = _rc(folder, f"catalog-{scenario}.rc")
        try:
            doc = json.loads(_read(folder, f"catalog-{scenario}.json"))
        except ValueError:
            err = _read(folder, f"catalog-{scenario}.err").strip().splitlines()
            lines.append(f"{scenario}: no report (exit {rc}, {seconds} s): {_clip(err[-1] if err else 'no output')}")
            problems.append(f"scenario {scenario} gave no report (exit {rc})")
            continue
        claims = doc.get("claims", [])
        tally = Counter(c["verdict"] or c["status"] for c in claims)
        verdicts.update(tally)
        total_claims += len(claims)
        failed = [e for e in doc.get("experiments", []) if e.get("status") == "failed" or e.get("error")]
        shown = ", ".join(f"{k} {v}" for k, v in sorted(tally.items()))
        lines.append(f"{scenario}: {len(claims)} claims ({shown}); {len(failed)} experiment(s) failed; "
                     f"exit {rc}, {seconds} s; devices: {_clip(doc.get('deviceMode', ''), 160)}")
        for experiment in failed:
            lines.append(f"  FAILED {experiment['id']}: {_clip(experiment.get('error') or '', 400)}")
            problems.append(f"experiment {scenario}/{experiment['id']} failed")
        for claim in claims:
            if "start-up" in claim.get("explanation", ""):
                lines.append(f"  start-up in {claim['id']}: {_clip(claim['explanation'], 300)}")
    lines.insert(0, f"catalog: {total_claims} claims over {len(SCENARIOS)} scenarios: "
                    + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
    return lines


def bench(folder: str, problems: List[str]) -> List[str]:
    rc, seconds = _rc(folder, "bench.rc")
    text = _read(folder, "bench.txt")
    lines = [f"StepTimer overhead (tests/bench/timing_overhead.py --cuda; exit {rc}, {seconds} s):"]
    lines += [f"  {line}" for line in text.splitlines() if line.startswith(("|", "GPU:"))]
    if rc != 0:
        lines += [f"  {_clip(line)}" for line in text.strip().splitlines()[-3:]]
        problems.append(f"the StepTimer benchmark did not run (exit {rc})")
    for line in text.splitlines():
        budget = budget_check(line)
        if budget:
            lines.append(f"  {budget}")
            if budget.startswith("OVER"):
                problems.append(budget)
    return lines


def budget_check(row: str) -> Optional[str]:
    """The StepTimer-with-loss= budget of a benchmark row: +1 % on the 4096-wide MLP, +5 % on the launch-bound one."""
    if not row.startswith("| 4-layer"):
        return None
    budget = 1.0 if "4096-wide" in row else 5.0
    found = re.findall(r"\(([+-]\d+\.\d+) %\)", row)
    if len(found) < 3:
        return None
    with_loss = float(found[-1])
    verdict = "within" if with_loss <= budget else "OVER"
    return f"{verdict} budget: StepTimer with loss= {with_loss:+.1f} % (budget +{budget:g} %) on {row.split('|')[1].strip()}"


def main(argv: List[str]) -> int:
    folder = argv[1] if len(argv) > 1 else "."
    problems: List[str] = []
    out = ["== GPU check ==", *[line for line in (_read(folder, "env.txt") + _read(folder, "gpus.txt")).splitlines() if line]]
    for part in (suite, catalog, bench):
        out.append("")
        out += part(folder, problems)
    out.append("")
    out.append("RESULT: " + ("passed" if not problems else "NOT passed — " + "; ".join(problems)))
    print("\n".join(out))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
