"""Shell settings are checked when the profile loads: a mistaken rule fails there, not in production."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from reyn_tools_shell.settings import ProgramRule, ShellSettings


def load(**data):
    return ShellSettings.model_validate(data)


def test_a_match_example_the_rule_refuses_fails_at_load():
    with pytest.raises(
        ValidationError,
        match=r"match example 'git log -n 5' is refused: git takes no further arguments here; got '-n'",
    ):
        load(programs=[{"name": "git", "subcommands": ["log"], "match": ["git log -n 5"]}])


def test_a_not_match_example_the_rule_allows_fails_at_load():
    with pytest.raises(ValidationError, match=r"not_match example 'find \. -exec rm' is allowed"):
        load(
            programs=[
                {
                    "name": "find",
                    "any_args": True,
                    "deny_args": ["^-delete$"],
                    "not_match": [["find", ".", "-exec", "rm"]],
                }
            ]
        )


def test_examples_that_hold_load_fine():
    settings = load(
        programs=[
            {
                "name": "git",
                "subcommands": ["status", "log"],
                "allow_args": [r"^--oneline$"],
                "deny_args": ["^-c"],
                "match": ["git status", "git log --oneline"],
                "not_match": ["git -c x=y status", "git push", "git log --format=x"],
            }
        ]
    )
    rule = settings.rule_for("git")
    assert rule is not None and rule.refusal(["git", "log", "--oneline"]) is None


def test_an_invalid_regex_fails_at_load_naming_it():
    with pytest.raises(ValidationError, match=r"pattern '\(unclosed' is not a valid regular expression"):
        load(programs=[{"name": "ls", "allow_args": ["(unclosed"]}])


def test_any_args_and_allow_args_together_fail_at_load():
    with pytest.raises(ValidationError, match="either allow_args or any_args"):
        load(programs=[{"name": "ls", "any_args": True, "allow_args": ["^-l$"]}])


@pytest.mark.parametrize("name", ["/bin/ls", "../ls", "", "ls -l", "a" * 200])
def test_program_names_must_be_bare(name):
    with pytest.raises(ValidationError, match="name"):
        load(programs=[{"name": name}])


def test_program_path_must_be_absolute():
    with pytest.raises(ValidationError, match="must be an absolute path"):
        load(programs=[{"name": "ls", "path": "bin/ls"}])


def test_duplicate_program_rules_fail_at_load():
    with pytest.raises(ValidationError, match="program 'ls' has two rules"):
        load(programs=[{"name": "ls"}, {"name": "ls", "any_args": True}])


def test_unknown_keys_are_errors():
    with pytest.raises(ValidationError, match="extra"):
        load(program=[{"name": "ls"}])
    with pytest.raises(ValidationError, match="extra"):
        load(programs=[{"name": "ls", "allowed_args": ["x"]}])


@pytest.mark.parametrize(
    "name", ["LD_PRELOAD", "DYLD_INSERT_LIBRARIES", "PYTHONPATH", "GITHUB_TOKEN", "db_password"]
)
def test_env_set_cannot_set_dropped_variables(name):
    with pytest.raises(ValidationError, match="env_set cannot set"):
        load(env_set={name: "x"})


def test_env_allow_naming_a_dropped_variable_fails_at_load():
    with pytest.raises(ValidationError, match="'PYTHONPATH' is always dropped"):
        load(env_allow=["PATH", "PYTHONPATH"])


def test_timeout_larger_than_the_cap_fails_at_load():
    with pytest.raises(ValidationError, match="larger than max_timeout_s"):
        load(timeout_s=600, max_timeout_s=300)


def test_a_rule_refuses_other_programs_and_too_many_arguments():
    rule = ProgramRule(name="echo", any_args=True, max_args=2)
    assert rule.refusal(["printf", "x"]) == "the program must be 'echo'"
    assert rule.refusal(["echo", "a", "b", "c"]) == "echo takes at most 2 arguments here, got 3"
    assert rule.refusal(["echo", "a", "b"]) is None
