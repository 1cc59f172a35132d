"""A scenario's typed parameter: checked, parsed and described (mgpulab_scenarios.parameters)."""
from __future__ import annotations

import pytest

from mgpulab_scenarios.parameters import Parameter, ParameterError

INT = Parameter("devices", "int", 2, "devices", 1, 8)
FLOAT = Parameter("lr", "float", 0.1, "rate", 1e-5, 1.0)
FLAG = Parameter("compare", "bool", True, "also DDP")
CHOICE = Parameter("placement", "choice", "auto", "where", choices=("auto", "cpu"))


def test_check_returns_the_python_value_and_names_the_parameter_and_range_when_it_refuses():
    assert INT.check(3) == 3 and INT.check(4.0) == 4 and isinstance(INT.check(4.0), int)
    assert FLOAT.check(1) == 1.0 and FLAG.check(False) is False and CHOICE.check("cpu") == "cpu"
    for parameter, bad in ((INT, 9), (INT, 2.5), (INT, True), (FLOAT, float("inf")), (FLOAT, "0.1"),
                           (FLAG, 1), (CHOICE, "gpu")):
        with pytest.raises(ParameterError, match=repr(parameter.name)):
            parameter.check(bad)
    with pytest.raises(ParameterError, match=r"an int in \[1, 8\], got 9"):
        INT.check(9)


def test_parse_reads_command_line_text_strictly():
    assert INT.parse(" 3 ") == 3 and FLOAT.parse("1e-3") == 0.001 and FLAG.parse("no") is False
    assert CHOICE.parse("cpu") == "cpu"
    for parameter, text in ((INT, "3.0"), (INT, "0x3"), (FLOAT, "nan"), (FLAG, "maybe"), (CHOICE, "gpu")):
        with pytest.raises(ParameterError):
            parameter.parse(text)


def test_to_dict_describes_a_range_or_the_choices_for_the_form():
    assert INT.to_dict() == {"name": "devices", "type": "int", "default": 2, "help": "devices", "min": 1, "max": 8}
    assert CHOICE.to_dict()["choices"] == ["auto", "cpu"] and "min" not in CHOICE.to_dict()
    assert FLAG.allowed() == "true or false" and CHOICE.allowed() == "one of 'auto', 'cpu'"
