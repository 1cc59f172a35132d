"""A scenario as notebook cells: its introduction, each step's text, its
templated experiments rendered with validated parameter values, each step's
explanation, and a last, templated, cell that shows each claim's verdict from
the evidence the experiment cells recorded.

Every cell carries its template ``{id, parameters, fields, question}``
(see :meth:`Scenario.template`), so the lab can show a code cell's parameter
form and its "predict first" question, and re-render every attached cell, the
markdown ones included, when a value changes: markdown that quotes a value
("With batch_size=64 on 4 devices") follows the form. Markdown cells have no
fields and no question; a step's explanation cell also carries
``revealAfter`` (the claim ids whose verdicts reveal it: it would give the
answer away before the prediction). The same builder serves ``cli
--notebook``, the catalog service's "notebook" and its "render" of one
markdown template id.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from .rendering import markdown_escape, render_markdown, table_cell
from .vocabulary import INTRO_CELL, VERDICTS_ABOUT_CELL, VERDICTS_CELL


def notebook_cells(scenario: Any, params: Optional[Dict[str, Any]] = None) -> List[dict]:
    values = scenario.validate(params)
    cells: List[dict] = [markdown_cell(scenario, INTRO_CELL, values)]
    for step in scenario.steps:
        cells.append(markdown_cell(scenario, f"about-{step.id}", values))
        for cell in step.cells:
            cells.append(_code(scenario.render_cell(cell.id, values)))
        if step.explanation:
            cells.append(markdown_cell(scenario, f"explain-{step.id}", values))
    cells.append(markdown_cell(scenario, VERDICTS_ABOUT_CELL, values))
    cells.append(_code(scenario.render_cell(VERDICTS_CELL, values)))
    return cells


def markdown_cell(scenario: Any, markdown_id: str, params: Optional[Dict[str, Any]] = None) -> dict:
    """``{kind: "markdown", source, template}`` of the scenario's markdown cell ``markdown_id`` (one of
    :meth:`Scenario.markdown_ids`), rendered with the validated values; KeyError for another id."""
    values = scenario.validate(params)
    template: Dict[str, Any] = {"id": f"{scenario.id}/{markdown_id}", "parameters": values, "fields": [],
                                "question": None}
    if markdown_id == INTRO_CELL:
        return _markdown(_intro(scenario, values), template)
    if markdown_id == VERDICTS_ABOUT_CELL:
        return _markdown("## Verdicts\n\nReads the evidence the experiment cells above recorded when they ran with "
                         "the values in this form, and computes each claim's verdict from those numbers. It never "
                         "measures anything itself: a cell that has not run with these values is named, to be run "
                         "first.", template)
    for step in scenario.steps:
        if markdown_id == f"about-{step.id}":
            return _markdown(_about(scenario, step, values), template)
        if markdown_id == f"explain-{step.id}" and step.explanation:
            template["revealAfter"] = list(step.claims)
            return _markdown(render_markdown(step.explanation.strip(), values), template)
    raise KeyError(f"scenario {scenario.id!r} has no markdown cell {markdown_id!r}")


def _about(scenario: Any, step: Any, values: Dict[str, Any]) -> str:
    quotes = {claim.id: claim.quote for claim in scenario.claims}
    text = [render_markdown(step.markdown.strip(), values)]
    question, choices = scenario.question(step, values)
    if question and step.cells:
        text.append(f"**Predict first:** {question} — answer in the form on the code cell below before running it.")
    elif question:  # no cell to carry the question: keep it here
        text.append(f"**Predict first:** {question}")
        text.extend(f"- [ ] {choice}" for choice in choices)
    if step.claims:
        text.append("**Claims tested here:**")
        text.extend(f"> {quotes[claim_id]}" for claim_id in step.claims if claim_id in quotes)
    return "\n\n".join(text)


def _intro(scenario: Any, values: Dict[str, Any]) -> str:
    rows = "\n".join(f"| `{p.name}` | {table_cell(f'`{values[p.name]!r}`')} | {table_cell(p.help)} |"
                     for p in scenario.parameters)
    return (
        f"# {scenario.title}\n\n{scenario.summary}\n\nSource article: *{markdown_escape(scenario.source_title or scenario.source)}*. "
        "The article's claims are quoted as written; the lab measures each one and computes its verdict from this run.\n\n"
        f"| parameter | value | meaning |\n| --- | --- | --- |\n{rows}"
    )


def _code(rendered: dict) -> dict:
    return {"kind": "code", "source": rendered["source"], "template": rendered["template"]}


def _markdown(text: str, template: Dict[str, Any]) -> dict:
    return {"kind": "markdown", "source": text, "template": template}
