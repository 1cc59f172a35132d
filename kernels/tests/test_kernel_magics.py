"""IPython habits in a real kernel: magics, shell commands and ``obj?``, with
IPython's machinery and with the kernel's own fallback (MGPULAB_KERNEL_WITHOUT)."""
from __future__ import annotations

import re

import pytest

from kernel_run import run_kernel
from mgpulab_kernel import magic_syntax

BOTH = pytest.mark.parametrize("without", ["", "ipython,jedi"], ids=["ipython", "fallback"])


@BOTH
def test_time_prints_cpu_and_wall_time_and_gives_the_value(without):
    cell, cell_magic = run_kernel(["%time x = 6 * 7\nx", "%%time\ny = x + 1\ny"], without)
    assert re.search(r"CPU times: user .*, sys: .*, total: .*\nWall time: \d", cell.text)
    assert cell.of("execute_result")[0]["data"]["text/plain"] == "42"
    assert "Wall time:" in cell_magic.text and cell_magic.of("execute_result")[0]["data"]["text/plain"] == "43"


@BOTH
def test_timeit_prints_the_ipython_summary(without):
    line, cell, quick = run_kernel(["%timeit -r 3 sum(range(10))", "%%timeit -n 5 -r 2 data = list(range(50))\nsorted(data)",
                                    "r = %timeit -q -o -n 2 -r 2 1 + 1\nr.loops, len(r.all_runs)"], without)
    assert re.search(r"\d+(\.\d+)? [nµm]?s ± \d+(\.\d+)? [nµm]?s per loop \(mean ± std\. dev\. of 3 runs, [\d,]+ loops each\)", line.text)
    assert "of 2 runs, 5 loops each" in cell.text
    assert quick.text == "" and quick.of("execute_result")[0]["data"]["text/plain"] == "(2, 2)"


@BOTH
def test_shell_commands_stream_into_the_cell_and_can_be_captured(without):
    shell, captured = run_kernel(["print('before', flush=True)\n!echo hi; echo err >&2\nprint('after')",
                                  "lines = !printf 'a\\nb\\n'\nlines, _exit_code"], without)
    assert shell.status == "ok"
    assert shell.text.index("before") < shell.text.index("hi") < shell.text.index("after")
    assert "err" in shell.text
    assert captured.of("execute_result")[0]["data"]["text/plain"] == "(['a', 'b'], 0)"


@BOTH
def test_env_pwd_and_who(without, tmp_path):
    set_, get, missing, pwd, who = run_kernel(["%env MGL_TEST=on", "%env MGL_TEST", "%env MGL_NOT_SET", "%pwd", "a = 1\nb = 'x'\n%who"],
                                              without, cwd=str(tmp_path))
    assert "env: MGL_TEST=on" in set_.text
    assert get.of("execute_result")[0]["data"]["text/plain"] == "'on'"
    assert missing.status == "error" and "MGL_NOT_SET" in missing.of("error")[0]["evalue"]
    assert pwd.of("execute_result")[0]["data"]["text/plain"] == repr(str(tmp_path))
    assert who.text.strip().split("\t") == ["a", "b"]  # the kernel's own names (display, get_ipython) are hidden


@BOTH
def test_an_unknown_magic_names_the_supported_ones(without):
    (cell,) = run_kernel(["%load_ext foo"], without)
    error = cell.of("error")[0]
    assert error["ename"] == "MagicError"
    assert "%load_ext is not a magic" in error["evalue"] and "%timeit" in error["evalue"] and "!cmd" in error["evalue"]


@BOTH
def test_tracebacks_point_at_the_users_lines(without):
    line_magic, cell_magic, in_loop = run_kernel(["x = 1\n%time y = 2\n1 / 0", "%%time\nz = 1\nz / 0",
                                                  "for i in range(2):\n    %time i\n    undefined_name"], without)
    assert any('line 3' in entry for entry in line_magic.of("error")[0]["traceback"])
    assert "1 / 0" in "\n".join(line_magic.of("error")[0]["traceback"])
    assert any('line 3' in entry for entry in cell_magic.of("error")[0]["traceback"])
    assert "z / 0" in "\n".join(cell_magic.of("error")[0]["traceback"])
    assert any('line 3' in entry for entry in in_loop.of("error")[0]["traceback"])


@BOTH
def test_question_mark_shows_signature_and_docstring(without):
    (cell,) = run_kernel(["len?"], without)
    assert "Signature: len(obj, /)" in cell.text and "Return the number of items" in cell.text


@BOTH
def test_matplotlib_inline_is_accepted_and_ranks_still_parses(without):
    inline, other = run_kernel(["%matplotlib inline", "%matplotlib qt"], without)
    assert inline.status == "ok"
    assert other.status == "error" and "only inline" in other.of("error")[0]["evalue"]


def test_the_fallback_leaves_strings_and_brackets_alone():
    code = 's = """\n%notmagic\n!notshell\n"""\nx = (1,\n%2)\ny = 3 % 2\n!echo hi\n  %time 1'
    assert magic_syntax.fallback_transform(code).split("\n") == [
        's = """', "%notmagic", "!notshell", '"""', "x = (1,", "%2)", "y = 3 % 2",
        "get_ipython().system('echo hi')", "  get_ipython().run_line_magic('time', '1')"]
    assert magic_syntax.fallback_transform("%%time\na\nb") == "get_ipython().run_cell_magic('time', '', 'a\\nb\\n')\n"  # as IPython's
    assert magic_syntax.fallback_transform("x = !ls -l") == "x = get_ipython().getoutput('ls -l')"
    assert magic_syntax.fallback_transform("obj.attr??") == "get_ipython().run_line_magic('pinfo2', 'obj.attr')"


def test_plain_python_is_not_transformed():
    code = "x = {'a': 1}\nprint(x != 2)\n"
    assert magic_syntax.to_python(code) is code
