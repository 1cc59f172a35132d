"""A scenario as notebook cells: its explanation and claims as markdown, its
templated experiments rendered with validated parameter values, and a last,
templated, cell that runs the experiments and shows each claim's verdict with
the numbers it came from.

Every code cell carries its template ``{id, parameters, fields, question}``
(see :meth:`Scenario.template`), so the lab can show the cell's parameter
form and its "predict first" question, and re-render the cell when a value
changes. The same builder serves ``cli --notebook`` and the catalog service.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from .core import VERDICTS_CELL


def notebook_cells(scenario: Any, params: Optional[Dict[str, Any]] = None) -> List[dict]:
    values = scenario.validate(params)
    quotes = {claim.id: claim.quote for claim in scenario.claims}
    cells: List[dict] = [_markdown(_intro(scenario, values))]
    for step in scenario.steps:
        text = [step.markdown.strip()]
        question, choices = scenario.question(step, values)
        if question and step.cells:
            text.append(f"**Predict first:** {question} — answer in the form on the code cell below before running it.")
        elif question:  # no cell to carry the question: keep it here
            text.append(f"**Predict first:** {question}")
            text.extend(f"- [ ] {choice}" for choice in choices)
        if step.claims:
            text.append("**Claims tested here:**")
            text.extend(f"> {quotes[claim_id]}" for claim_id in step.claims if claim_id in quotes)
        cells.append(_markdown("\n\n".join(text)))
        for cell in step.cells:
            cells.append(_code(scenario.render_cell(cell.id, values)))
    cells.append(_markdown("## Verdicts\n\nRuns every experiment of this scenario with the values above and computes "
                           "each claim's verdict from the measured numbers."))
    cells.append(_code(scenario.render_cell(VERDICTS_CELL, values)))
    return cells


def _intro(scenario: Any, values: Dict[str, Any]) -> str:
    rows = "\n".join(f"| `{p.name}` | `{values[p.name]!r}` | {p.help} |" for p in scenario.parameters)
    return (
        f"# {scenario.title}\n\n{scenario.summary}\n\nSource article: `{scenario.source}`. "
        "The article's claims are quoted as written; the lab measures each one and computes its verdict from this run.\n\n"
        f"| parameter | value | meaning |\n| --- | --- | --- |\n{rows}"
    )


def _code(rendered: dict) -> dict:
    return {"kind": "code", "source": rendered["source"], "template": rendered["template"]}


def _markdown(text: str) -> dict:
    return {"kind": "markdown", "source": text, "template": None}
