"""A scenario as notebook cells: its explanation, claims and "predict first"
questions as markdown, its templated experiments rendered with validated
parameter values (the template id and values ride along, so the lab can
re-render them), and a last cell that runs the experiments and shows each
claim's verdict with the numbers it came from.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from .core import literal, render_text


def notebook_cells(scenario: Any, params: Optional[Dict[str, Any]] = None) -> List[dict]:
    values = scenario.validate(params)
    quotes = {claim.id: claim.quote for claim in scenario.claims}
    cells: List[dict] = [_markdown(_intro(scenario, values))]
    for step in scenario.steps:
        text = [step.markdown.strip()]
        question, choices = scenario.question(step, values)
        if question:
            text.append(f"**Predict first:** {question}")
            text.extend(f"- [ ] {choice}" for choice in choices)
        if step.claims:
            text.append("**Claims tested here:**")
            text.extend(f"> {quotes[claim_id]}" for claim_id in step.claims if claim_id in quotes)
        cells.append(_markdown("\n\n".join(text)))
        for cell in step.cells:
            cells.append({
                "kind": "code",
                "source": render_text(cell.template, values),
                "template": {"id": f"{scenario.id}/{cell.id}", "parameters": values},
            })
    cells.append(_markdown("## Verdicts\n\nRuns every experiment of this scenario with the values above and computes each claim's verdict from the measured numbers."))
    cells.append({
        "kind": "code",
        "source": f"import mgpulab_scenarios\nmgpulab_scenarios.show_verdicts(mgpulab_scenarios.run({literal(scenario.id)}, {_dict_literal(values)}))",
        "template": None,
    })
    return cells


def _intro(scenario: Any, values: Dict[str, Any]) -> str:
    rows = "\n".join(f"| `{p.name}` | `{values[p.name]!r}` | {p.help} |" for p in scenario.parameters)
    return (
        f"# {scenario.title}\n\n{scenario.summary}\n\nSource article: `{scenario.source}`. "
        "The article's claims are quoted as written; the lab measures each one and computes its verdict from this run.\n\n"
        f"| parameter | value | meaning |\n| --- | --- | --- |\n{rows}"
    )


def _markdown(text: str) -> dict:
    return {"kind": "markdown", "source": text, "template": None}


def _dict_literal(values: Dict[str, Any]) -> str:
    return "{" + ", ".join(f"{literal(name)}: {literal(value)}" for name, value in values.items()) + "}"
