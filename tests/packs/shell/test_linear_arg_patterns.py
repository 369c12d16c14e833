"""An operator's ``allow_args`` / ``deny_args`` run against model-supplied arguments, so they match in
linear time (RE2) whatever the pattern; a construct RE2 cannot run is refused when the profile loads."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from pydantic import ValidationError
from reyn_tools_shell.settings import ProgramRule


def test_a_catastrophic_pattern_answers_at_once_on_a_hostile_argument():
    # With Python's re, deny_args "(a+)+$" on this argument takes longer than the age of the universe;
    # the subprocess and its timeout only keep a regression from hanging the suite.
    code = textwrap.dedent(
        """
        from reyn_tools_shell.settings import ProgramRule
        rule = ProgramRule(name="echo", any_args=True, deny_args=["(a+)+$"], allow_args=())
        assert rule.refusal(["echo", "a" * 40 + "!"]) is None
        assert rule.refusal(["echo", "a" * 40]) is not None
        rule = ProgramRule(name="grep", allow_args=["(x+x+)+y"])
        assert rule.refusal(["grep", "x" * 5000]) is not None
        print("ok")
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "ok", proc.stderr


@pytest.mark.parametrize("pattern", [r"(a)\1", r"foo(?=bar)", r"(?<!x)y"])
def test_a_pattern_re2_cannot_run_is_refused_at_load_naming_it(pattern):
    with pytest.raises(ValidationError) as info:
        ProgramRule(name="echo", deny_args=[pattern], any_args=True)
    message = str(info.value)
    assert repr(pattern) in message and "RE2" in message and "lookaround" in message


def test_ordinary_patterns_keep_their_meaning():
    rule = ProgramRule(name="git", allow_args=[r"log|status", r"-n", r"\d{1,3}"], deny_args=[r"^--output"])
    assert rule.refusal(["git", "log", "-n", "5"]) is None
    assert rule.refusal(["git", "log", "-n", "5000"]) is not None  # allow_args match entirely
    assert rule.refusal(["git", "--output=x"]) is not None
