"""How values and numbers are written into sentences (mgpulab_scenarios.wording)."""
from __future__ import annotations

from mgpulab_scenarios.wording import clip, fmt, short_repr


def test_clip_cuts_at_a_word_boundary_with_an_ellipsis_and_leaves_short_text_alone():
    assert clip("short", 10) == "short"
    assert clip("the quick brown fox jumps", 15) == "the quick…"
    assert len(clip("the quick brown fox jumps", 15)) <= 15
    assert clip("/a/very/long/path/without/spaces", 12) == "/a/very/lon…"  # no boundary near: cut mid-word


def test_short_repr_is_one_bounded_line_even_when_repr_raises():
    assert short_repr("x") == "'x'"
    long = short_repr("y" * 500, 40)
    assert len(long) < 50 and long.endswith("… (502 chars)")

    class Broken:
        def __repr__(self):
            raise RuntimeError("no")

    assert short_repr(Broken()) == "<Broken>"


def test_fmt_writes_three_significant_digits_and_switches_to_exponents_outside_a_readable_range():
    assert fmt(1.23456) == "1.23" and fmt(0.0) == "0" and fmt(1234.5) == "1.23e+03"
    assert fmt(1e-4) == "1.00e-04" and fmt(2e6) == "2.00e+06"
    assert fmt(7) == "7" and fmt("text") == "text"
    assert fmt(3.14159, digits=5) == "3.1416"
