"""The give-away check: nothing a participant reads before predicting may answer the question.

A scenario asks first and measures after. Text that tells the answer before
the prediction (a card that says "not hung", a step intro that says "raises
CUDA out of memory") turns the prediction into copying, and the class's
tally into noise. This module finds such text; a test runs it over every
scenario (``kernels/tests/test_scenario_giveaways.py``).

What is read before predicting a step's question (:func:`shown_before`): the
scenario's card (title and summary), its introduction (the parameter table
and its help texts included), the step's own text (without the question
itself, and without the article's claims, which are quoted *to be tested*),
and the comments and string literals of the step's code cells. The
explanation cells are not: they stay folded until the step's verdicts.

A choice's answer words (:func:`answer_words`): the words of the choice that
the question itself does not use (stemmed: "hung" and "hangs" are "hang"),
plus the words a step declares for a choice too plain to be found by its own
words ("yes", "no": ``Step.tells``). A sentence gives a choice away when it
holds its answer words — all of them for a one- or two-word answer, any two
for a longer one.
"""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

# Words too common to say anything about an answer on their own.
STOPWORDS = frozenset("""
a an the and or but if of on in at to for from by with without as is are be been was were it its this that
these those there here than then so not do does did done can could will would may might must should what which
who how when where why each every one all any some per only also into onto over under up down out very just
about like same x n b k does doe get gets many much you your we our use uses used happen happens after before
expect still its it's their they them he she his her let lets
""".split()) - {"same", "about", "every"}
# Whole choices made only of these are too plain to be looked for ("yes", "no", "same"): the step must
# declare which words would tell them (Step.tells).
PLAIN = frozenset("yes no same never always once k 0 none other".split())
_IRREGULAR = {"hung": "hang", "ran": "run", "ram": "ram", "fed": "feed", "lost": "lose", "larger": "large",
              "smaller": "small", "faster": "fast", "slower": "slow", "fewer": "few", "less": "less",
              "bigger": "big", "worse": "bad", "better": "good", "copies": "copy", "copied": "copy"}


def stem(word: str) -> str:
    """A crude English stem, enough to meet "hangs"/"hung"/"hanging" as "hang"."""
    w = word.lower()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            if suffix in ("ing", "ed") and len(w) - len(suffix) < 4:
                return w  # speed, need, bring: not a suffix
            w = w[: len(w) - len(suffix)] + keep
            if suffix in ("ing", "ed") and len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeiousl":
                w = w[:-1]  # skipped -> skip, running -> run
            return w
    return w


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|\d+(?:\.\d+)?%?x?")


def words(text: str) -> List[str]:
    return [stem(w) for w in _WORD.findall(text)]


def content(text: str) -> Set[str]:
    return {w for w in words(text) if w not in STOPWORDS and len(w) > 1}


# Words every text of the lab uses: they never say what a sentence is about.
DOMAIN = frozenset(stem(w) for w in "dataparallel ddp device devices gpu gpus model run runs step".split())


@dataclass(frozen=True)
class Answer:
    """What would tell one choice: its own words, and phrases (each a set of stems) that say it too."""

    own: FrozenSet[str]
    phrases: Tuple[FrozenSet[str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.own) or any(self.phrases)

    def words(self) -> Set[str]:
        return set(self.own).union(*self.phrases)


def answer_words(question: str, choice: str, tells: Sequence[str] = ()) -> Answer:
    """What would tell this choice: its own words that the question does not use (those are the setup's
    vocabulary, in every intro), beyond plain and everyday ones; and each of ``tells`` as a phrase."""
    own = content(choice) - content(question) - DOMAIN - PLAIN
    return Answer(frozenset(own), tuple(frozenset(content(t)) for t in tells if content(t)))


def subject_words(question: str, choices: Sequence[str], title: str) -> Set[str]:
    """What the question is about: its words that no choice uses, beyond the scenario's title and the lab's
    everyday words. A sentence that tells an answer must also be about this (the card says "hang" about
    other experiments; it gives away the one whose subject it names)."""
    chosen: Set[str] = set()
    for choice in choices:
        chosen |= content(choice)
    return content(question) - chosen - content(title) - DOMAIN


def gives_away(sentence: str, answer: Answer, subject: Optional[Set[str]] = None) -> bool:
    """Whether the sentence is about the question's subject and says the choice: all of its own words (any
    two of three or more), or every word of one of its phrases."""
    said = set(words(sentence))
    if subject and not subject & said:
        return False
    own = answer.own & said
    if answer.own and len(own) >= (len(answer.own) if len(answer.own) <= 2 else 2):
        return True
    return any(phrase <= said for phrase in answer.phrases if phrase)


_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")


def sentences(text: str) -> List[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


_TEMPLATE_ID = re.compile(r"[rbfu]*(['\"])[a-z0-9-]+/[a-z0-9-]+\1")  # "hangs/slow-link": an id, not words


_FSTRING_MIDDLE = getattr(tokenize, "FSTRING_MIDDLE", None)  # PEP 701 (3.12) splits f-strings into tokens


def code_text(source: str) -> str:
    """The comments and string literals of a code cell (what it says in words; names are code)."""
    out: List[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                out.append(token.string.lstrip("#").strip())
            elif token.type == tokenize.STRING and not _TEMPLATE_ID.fullmatch(token.string):
                out.append(re.sub(r"\{[^}]*\}", " ", token.string))
            elif token.type == _FSTRING_MIDDLE:  # Python 3.12+: an f-string's words come as their own tokens
                out.append(token.string)
    except (tokenize.TokenError, IndentationError):
        return source
    return "\n".join(out)


@dataclass(frozen=True)
class Finding:
    scenario: str
    step: str
    choice: str
    where: str
    sentence: str
    words: Tuple[str, ...]

    def __str__(self) -> str:
        return (f"{self.scenario}/{self.step}: {self.where} tells the choice {self.choice!r} "
                f"(answer words {', '.join(self.words)}): {self.sentence!r}")


def shown_before(scenario: Any, step: Any, values: Dict[str, Any]) -> List[Tuple[str, str]]:
    """``(where, text)`` a participant reads before predicting ``step``'s question (see the module doc)."""
    from .as_notebook import markdown_cell
    from .core import INTRO_CELL
    question, _ = scenario.question(step, values)
    about = markdown_cell(scenario, f"about-{step.id}", values)["source"]
    kept = [line for line in about.split("\n\n")
            if not line.startswith("**Predict first:**") and not line.startswith("> ")
            and line.strip() != "**Claims tested here:**"]
    shown = [("the card", f"{scenario.title}\n{scenario.summary}"),
             ("the introduction", markdown_cell(scenario, INTRO_CELL, values)["source"]),
             ("the step's text", "\n\n".join(kept))]
    for cell in step.cells:
        shown.append((f"cell {cell.id}", code_text(scenario.render_cell(cell.id, values)["source"])))
    return [(where, text.replace(question or "\0", " ")) for where, text in shown]


def findings(scenario: Any, params: Optional[Dict[str, Any]] = None) -> List[Finding]:
    """Every sentence shown before a question that tells one of its choices."""
    values: Dict[str, Any] = scenario.validate(params)
    found: List[Finding] = []
    for step in scenario.steps:
        if step.question is None:
            continue
        question, choices = scenario.question(step, values)
        tells = getattr(step, "tells", ()) or ()
        subject = subject_words(question or "", choices, scenario.title)
        for index, choice in enumerate(choices):
            answer = answer_words(question or "", choice, tells[index] if index < len(tells) else ())
            for where, text in shown_before(scenario, step, values):
                for sentence in sentences(text):
                    if gives_away(sentence, answer, subject):
                        found.append(Finding(scenario.id, step.id, choice, where, sentence,
                                             tuple(sorted(answer.words() & set(words(sentence))))))
    return found


def unanswerable(scenario: Any, params: Optional[Dict[str, Any]] = None) -> List[str]:
    """Choices the check cannot look for (no answer words): each needs ``Step.tells``."""
    values: Dict[str, Any] = scenario.validate(params)
    missing = []
    for step in scenario.steps:
        if step.question is None:
            continue
        question, choices = scenario.question(step, values)
        tells = getattr(step, "tells", ()) or ()
        for index, choice in enumerate(choices):
            if not answer_words(question or "", choice, tells[index] if index < len(tells) else ()):
                missing.append(f"{scenario.id}/{step.id}: choice {choice!r}")
    return missing


def all_findings(scenarios: Iterable[Any], values_list: Sequence[Optional[Dict[str, Any]]] = (None,)) -> List[Finding]:
    out: List[Finding] = []
    for scenario in scenarios:
        for values in values_list:
            for finding in findings(scenario, values):
                if finding not in out:
                    out.append(finding)
    return out
