"""``[plugins.shell.settings]``: the program allowlist, its argument rules, limits and environment.

Every rule is checked when the profile loads: regexes must compile, and each rule's ``match``
examples must be allowed and its ``not_match`` examples refused — so a mistaken rule fails at load,
not in production.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from functools import cached_property
from typing import Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Example = Union[list[str], str]  # an argv list, or a command line split with shlex

ALWAYS_DROPPED_PREFIXES: tuple[str, ...] = ("LD_", "DYLD_", "PYTHON")
DEFAULT_SECRET_PATTERNS: tuple[str, ...] = (
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*KEY*",
    "*CREDENTIAL*",
    "*AUTH*",
    "*COOKIE*",
    "*SESSION*",
    "*PRIVATE*",
    "*_PAT",
    "*SIGNATURE*",
)
DEFAULT_ENV_ALLOW: tuple[str, ...] = (
    "PATH",
    "HOME",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "TZ",
    "USER",
    "LOGNAME",
    "TMPDIR",
)


def example_argv(example: Example) -> list[str]:
    """An example as an argv list (strings are split like a POSIX shell would, never run by one)."""
    return shlex.split(example) if isinstance(example, str) else list(example)


class ProgramRule(BaseModel):
    """One allowed program and the arguments it may take (deny by default).

    - ``name``: ``argv[0]`` as the model writes it — a bare program name, never a path.
    - ``path``: the executable to run; default: looked up on the (scrubbed) ``PATH``.
    - ``subcommands``: when set, ``argv[1]`` must be one of them (``git`` → ``status``, ``diff``, ``log``).
    - ``allow_args``: regexes; every further argument must match one of them *entirely*.
    - ``any_args``: allow any further arguments instead (``deny_args`` still apply). Without
      ``allow_args`` or ``any_args``, no further arguments are allowed.
    - ``deny_args``: regexes; an argument they match *anywhere* (``re.search``) refuses the call —
      checked first, on every argument, e.g. ``^-c``, ``^--upload-pack``, ``^-exec$``.
    - ``match`` / ``not_match``: example command lines that must be allowed / refused.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9._+-]{1,128}$")
    path: str | None = None
    subcommands: tuple[str, ...] | None = None
    allow_args: tuple[str, ...] = ()
    any_args: bool = False
    deny_args: tuple[str, ...] = ()
    max_args: int = Field(default=64, ge=0, le=4096)
    match: tuple[Example, ...] = ()
    not_match: tuple[Example, ...] = ()

    @field_validator("path")
    @classmethod
    def _path_is_absolute(cls, path: str | None) -> str | None:
        if path is not None and not path.startswith("/"):
            raise ValueError(f"path {path!r} must be an absolute path to the executable")
        return path

    @field_validator("allow_args", "deny_args")
    @classmethod
    def _patterns_compile(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} is not a valid regular expression: {exc}") from None
        return patterns

    @model_validator(mode="after")
    def _examples_hold(self) -> ProgramRule:
        if self.any_args and self.allow_args:
            raise ValueError("use either allow_args or any_args = true, not both")
        for example in self.match:
            argv = example_argv(example)
            reason = self.refusal(argv)
            if reason is not None:
                raise ValueError(
                    f"rule for {self.name!r}: match example {shlex.join(argv)!r} is refused: {reason}"
                )
        for example in self.not_match:
            argv = example_argv(example)
            if argv and argv[0] == self.name and self.refusal(argv) is None:
                raise ValueError(f"rule for {self.name!r}: not_match example {shlex.join(argv)!r} is allowed")
        return self

    @cached_property
    def _allow(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p) for p in self.allow_args)

    @cached_property
    def _deny(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p) for p in self.deny_args)

    def refusal(self, argv: list[str]) -> str | None:
        """Why this rule refuses ``argv``, or None when it allows it."""
        if not argv or argv[0] != self.name:
            return f"the program must be {self.name!r}"
        args = argv[1:]
        if len(args) > self.max_args:
            return f"{self.name} takes at most {self.max_args} arguments here, got {len(args)}"
        for arg in args:
            for pattern in self._deny:
                if pattern.search(arg):
                    return (
                        f"argument {arg[:100]!r} is refused for {self.name} (deny rule {pattern.pattern!r})"
                    )
        rest = args
        if self.subcommands is not None:
            if not args or args[0] not in self.subcommands:
                got = repr(args[0][:100]) if args else "none"
                return f"{self.name} may only run the subcommands {list(self.subcommands)}; got {got}"
            rest = args[1:]
        if self.any_args:
            return None
        for arg in rest:
            if not any(p.fullmatch(arg) for p in self._allow):
                if not self._allow:
                    return f"{self.name} takes no further arguments here; got {arg[:100]!r}"
                return (
                    f"argument {arg[:100]!r} is not allowed for {self.name}; each argument must "
                    f"match one of {list(self.allow_args)}"
                )
        return None

    def summary(self) -> str:
        """A one-line description for the tool's schema (what a model may run)."""
        if self.subcommands is not None:
            return f"{self.name} ({', '.join(self.subcommands)})"
        return self.name


def is_dropped_env(name: str, secret_patterns: tuple[str, ...]) -> bool:
    """Whether an environment variable is never passed to a command: loader and interpreter
    hooks (``LD_*``, ``DYLD_*``, ``PYTHON*``) and anything that looks like a secret."""
    upper = name.upper()
    if upper.startswith(ALWAYS_DROPPED_PREFIXES):
        return True
    return any(fnmatch.fnmatchcase(upper, p.upper()) for p in secret_patterns)


class ShellSettings(BaseModel):
    """Settings of the shell pack. With no ``programs``, the ``shell`` tool is unavailable."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workspace: str | None = None
    programs: tuple[ProgramRule, ...] = ()
    timeout_s: float = Field(default=30.0, gt=0, le=3600)
    max_timeout_s: float = Field(default=300.0, gt=0, le=3600)
    max_output_bytes: int = Field(default=64 * 1024, ge=256, le=64 * 1024 * 1024)
    env_allow: tuple[str, ...] = DEFAULT_ENV_ALLOW
    env_set: dict[str, str] = Field(default_factory=dict)
    secret_patterns: tuple[str, ...] = DEFAULT_SECRET_PATTERNS

    @field_validator("programs")
    @classmethod
    def _names_are_unique(cls, programs: tuple[ProgramRule, ...]) -> tuple[ProgramRule, ...]:
        seen: set[str] = set()
        for rule in programs:
            if rule.name in seen:
                raise ValueError(f"program {rule.name!r} has two rules; merge them into one")
            seen.add(rule.name)
        return programs

    @model_validator(mode="after")
    def _environment_is_consistent(self) -> ShellSettings:
        for name in self.env_set:
            if is_dropped_env(name, self.secret_patterns) or "=" in name or not name:
                raise ValueError(
                    f"env_set cannot set {name!r}: loader, interpreter and secret-looking "
                    "variables are never passed to commands"
                )
        for entry in self.env_allow:
            if not any(c in entry for c in "*?[") and is_dropped_env(entry, self.secret_patterns):
                raise ValueError(
                    f"env_allow entry {entry!r} is always dropped (loader, interpreter or "
                    "secret-looking variable); remove it"
                )
        if self.timeout_s > self.max_timeout_s:
            raise ValueError(
                f"timeout_s ({self.timeout_s}) is larger than max_timeout_s ({self.max_timeout_s})"
            )
        return self

    def rule_for(self, name: str) -> ProgramRule | None:
        """The rule for program ``name``, if it is allowed at all."""
        return next((r for r in self.programs if r.name == name), None)
