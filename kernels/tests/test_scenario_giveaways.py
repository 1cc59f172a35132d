"""Nothing a participant reads before predicting gives the answer away; every question is explained after.

The check itself is :mod:`mgpulab_scenarios.giveaways`; here it runs over every
scenario, at the defaults and at values that change the rendered texts (the
question's own numbers, a fault, one device), and its rules are pinned on
sentences of the kind it must catch and must let through.
"""
from __future__ import annotations

import itertools

import pytest

import mgpulab_scenarios as sc
from mgpulab_scenarios import giveaways

# Values that change what the texts say: the defaults, small values, and each choice of a choice parameter.
SMALL = {"batch_size": 3, "devices": 2, "world_size": 2, "timing_repeats": 3, "repeats": 3, "num_steps": 3}


def _value_sets(scenario):
    sets = [{}, {k: v for k, v in SMALL.items() if k in {p.name for p in scenario.parameters}}]
    for parameter in scenario.parameters:
        if parameter.type == "choice":
            sets.extend({parameter.name: choice} for choice in parameter.choices)
        elif parameter.type == "bool":
            sets.append({parameter.name: not parameter.default})
    return sets


@pytest.mark.parametrize("scenario_id", sc.IDS)
def test_nothing_shown_before_a_prediction_tells_its_answer(scenario_id):
    scenario = sc.get(scenario_id)
    found = giveaways.all_findings([scenario], _value_sets(scenario))
    assert found == [], "text shown before predicting gives the answer away:\n" + "\n".join(map(str, found))


@pytest.mark.parametrize("scenario_id", sc.IDS)
def test_every_choice_has_words_the_check_can_look_for(scenario_id):
    # A choice the check cannot look for ("yes", "K") would escape it: its step declares the words that tell it.
    assert giveaways.unanswerable(sc.get(scenario_id)) == []


@pytest.mark.parametrize("scenario_id", sc.IDS)
def test_every_question_has_an_explanation_folded_until_its_verdicts(scenario_id):
    scenario = sc.get(scenario_id)
    cells = sc.notebook(scenario_id)
    for step in scenario.steps:
        if step.question is None:
            continue
        assert step.explanation.strip(), f"{scenario_id}/{step.id}: a question without its explanation"
        explain = [c for c in cells if c["template"]["id"] == f"{scenario_id}/explain-{step.id}"]
        assert len(explain) == 1 and explain[0]["template"]["revealAfter"] == list(step.claims)


def test_the_check_catches_what_a_card_or_an_intro_must_not_say():
    # The kinds of sentence found in the catalog's texts before this check existed.
    hangs = giveaways.answer_words("An oversized batch on DataParallel…", "hangs", ("stuck",))
    subject = giveaways.subject_words("An oversized batch on DataParallel…", ["hangs", "fails fast with an error"], "")
    assert giveaways.gives_away("Oversized batch (emulated OOM, diagnosed, not hung; in DDP", hangs, subject)
    fails = giveaways.answer_words("An oversized batch on DataParallel…", "fails fast with an error",
                                   ("raises", "out of memory"))
    assert giveaways.gives_away("On a GPU an oversized batch raises `CUDA out of memory`;", fails, subject)
    # ... and lets through a sentence about something else, or one that only names the subject.
    assert not giveaways.gives_away("slow link (communication share per rank); the watchdog stops hung ranks",
                                    hangs, subject)
    assert not giveaways.gives_away("The cell runs an oversized batch of 8192 rows.", hangs, subject)
    assert not giveaways.gives_away("The cell runs an oversized batch of 8192 rows.", fails, subject)


def test_stems_meet_the_forms_a_text_uses():
    assert {giveaways.stem(w) for w in ("hang", "hangs", "hung", "hanging")} == {"hang"}
    assert giveaways.stem("skipped") == "skip" and giveaways.stem("speed") == "speed"
    assert giveaways.stem("faster") == "fast" and giveaways.stem("copies") == "copy"


def test_comments_and_strings_of_a_code_cell_are_read_and_names_are_not():
    text = giveaways.code_text('run = evidence.start("hangs/oom")  # the rank hangs here\nhang_timeout = 3\n'
                               'print(f"{n} rows: it hangs")\n')
    assert "the rank hangs here" in text and "it hangs" in text
    assert "hangs/oom" not in text and "hang_timeout" not in text


@pytest.mark.parametrize("scenario_id,values", itertools.product(sc.IDS, [{}]))
def test_the_texts_checked_are_those_a_participant_sees(scenario_id, values):
    scenario = sc.get(scenario_id)
    step = next(s for s in scenario.steps if s.question is not None)
    shown = dict(giveaways.shown_before(scenario, step, scenario.validate(values)))
    assert scenario.summary in shown["the card"]
    question, _ = scenario.question(step, scenario.validate(values))
    assert question not in shown["the step's text"]  # the question itself is not its own give-away
    assert not any(claim.quote in text for claim in scenario.claims for text in shown.values())
