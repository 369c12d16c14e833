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
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .grants import GrantSettings

Example = Union[list[str], str]  # an argv list, or a command line split with shlex

# Variables that make a program load or run code, or read configuration that does: never passed to
# a command, whatever ``env_allow`` says, and never settable with ``env_set``. Compared upper-cased.
CODE_INJECTION_PREFIXES: tuple[str, ...] = (
    "LD_",  # LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT
    "DYLD_",
    "PYTHON",  # PYTHONPATH, PYTHONSTARTUP, PYTHONHOME, PYTHONUSERBASE
    "GIT_",  # GIT_DIR, GIT_CONFIG_*, GIT_SSH_COMMAND, GIT_EXEC_PATH, GIT_ASKPASS, ... (see SAFE_GIT_NAMES)
    "NODE_",  # NODE_OPTIONS=--require, NODE_PATH
    "NPM_CONFIG_",  # npm reads npm_config_* (script-shell, node-options, ...)
    "PERL",  # PERL5OPT, PERL5LIB, PERLLIB, PERL5DB
    "RUBY",  # RUBYOPT, RUBYLIB
    "GEM_",
    "BUNDLE_",
    "BASH_FUNC_",  # exported shell functions
    "LUA_",  # LUA_INIT runs code, LUA_PATH / LUA_CPATH load it
    "CORECLR_",
    "COR_",
    "CARGO_",  # CARGO_TARGET_*_RUNNER, CARGO_BUILD_RUSTC_WRAPPER
    "RUSTC",  # RUSTC, RUSTC_WRAPPER, RUSTC_WORKSPACE_WRAPPER
    "PIP_",  # PIP_CONFIG_FILE, PIP_INDEX_URL
    "R_PROFILE",
    "R_ENVIRON",
    "R_LIBS",
)
CODE_INJECTION_NAMES: frozenset[str] = frozenset(
    {
        # shells: startup files, prompts and tracing that run commands
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "PS1",
        "PS2",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "IFS",
        "CDPATH",
        "GLOBIGNORE",
        "ZDOTDIR",
        # glibc and OpenSSL: modules, locales and engines loaded from a path
        "GCONV_PATH",
        "LOCPATH",
        "NLSPATH",
        "GLIBC_TUNABLES",
        "HOSTALIASES",
        "RESOLV_HOST_CONF",
        "OPENSSL_CONF",
        "OPENSSL_ENGINES",
        "OPENSSL_MODULES",
        "SSLKEYLOGFILE",
        # JVM, .NET, Go, PHP, Tcl, R, make
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "JAVA_OPTIONS",
        "CLASSPATH",
        "MAVEN_OPTS",
        "GRADLE_OPTS",
        "SBT_OPTS",
        "ANT_OPTS",
        "DOTNET_STARTUP_HOOKS",
        "DOTNET_ADDITIONAL_DEPS",
        "GOFLAGS",
        "GOENV",
        "PHPRC",
        "PHP_INI_SCAN_DIR",
        "TCLLIBPATH",
        "MAKEFLAGS",
        "MFLAGS",
        "GNUMAKEFLAGS",
        "MAKEFILES",
        "ELECTRON_RUN_AS_NODE",
        # commands other programs run: editors, pagers, browsers, password prompts
        "EDITOR",
        "VISUAL",
        "PAGER",
        "MANPAGER",
        "LESSOPEN",
        "LESSCLOSE",
        "BROWSER",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        # where programs look for their configuration (git, ssh, npm, ... read it from there)
        "XDG_CONFIG_HOME",
        "XDG_CONFIG_DIRS",
    }
)
# ``GIT_*`` variables that only name the author and committer: passed when allowlisted.
SAFE_GIT_NAMES: frozenset[str] = frozenset(
    f"GIT_{who}_{what}" for who in ("AUTHOR", "COMMITTER") for what in ("NAME", "EMAIL", "DATE")
)
DEFAULT_SECRET_PATTERNS: tuple[str, ...] = (
    "*TOKEN*",
    "*SECRET*",
    "*PASS*",  # PASSWORD, PASSWD, PASSPHRASE, DB_PASS, PGPASSFILE
    "*PWD*",  # MYSQL_PWD (and PWD itself, which would name the host's directory, not the command's)
    "*KEY*",
    "*CREDENTIAL*",
    "*CREDS*",
    "*AUTH*",
    "*COOKIE*",
    "*SESSION*",
    "*PRIVATE*",
    "*_PAT",
    "*SIGNATURE*",
    "*DSN*",  # SENTRY_DSN
    "*WEBHOOK*",  # SLACK_WEBHOOK_URL: the secret is the URL's path
    "*CONNECTION_STRING*",
    "*CONNSTR*",
)


# A value carrying credentials, whatever its name: ``scheme://user:pass@host`` (or a token as the
# user, ``https://ghp_x@github.com``), and ``key=value`` connection strings with a password or key.
def _compile_linear(pattern: str) -> Any:
    """An operator's argument pattern, compiled with RE2: the arguments it is matched against come
    from a model, so matching must take linear time whatever the pattern (Python's ``re`` can take
    exponential time on ``(a+)+$``). A construct RE2 cannot run is refused when the profile loads."""
    import re2  # google-re2

    options = re2.Options()
    options.log_errors = False  # the error is raised to the profile's reader, not printed to stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        raise ValueError(
            f"pattern {pattern!r} is not a valid regular expression for RE2: {exc}; argument patterns "
            "run on RE2 (linear time), which has no backreferences or lookaround"
        ) from None


_CREDENTIAL_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s@]+@")
_CREDENTIAL_PAIR = re.compile(
    r"(?i)(?:^|[\s;,&?])(?:password|passwd|pwd|pass|secret|token|api[_-]?key|accountkey|sharedaccesskey"
    r"|sharedaccesssignature|sig)\s*="
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

    What the program may then reach (files, network, processes, limits) is the kernel sandbox's
    business (``grants.py``), not the rule's: the rule only decides what may be started.
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

    @model_validator(mode="before")
    @classmethod
    def _no_reads_cwd_config(cls, data: Any) -> Any:
        if isinstance(data, dict) and "reads_cwd_config" in data:
            raise ValueError(
                "reads_cwd_config was removed: every command runs in the kernel sandbox, which confines "
                "whatever a program runs from its configuration (a Makefile, a conftest.py) to the grants; "
                "remove the key"
            )
        return data

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
            _compile_linear(pattern)
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
    def _allow(self) -> tuple[Any, ...]:
        return tuple(_compile_linear(p) for p in self.allow_args)

    @cached_property
    def _deny(self) -> tuple[Any, ...]:
        return tuple(_compile_linear(p) for p in self.deny_args)

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


def is_code_injection_env(name: str) -> bool:
    """Whether a variable makes programs load or run code, or read configuration that does
    (``LD_PRELOAD``, ``NODE_OPTIONS``, ``BASH_ENV``, ``GIT_CONFIG_PARAMETERS``, ``EDITOR``, ...)."""
    upper = name.upper()
    if upper in SAFE_GIT_NAMES:
        return False
    return upper in CODE_INJECTION_NAMES or upper.startswith(CODE_INJECTION_PREFIXES)


def has_credentials(value: str) -> bool:
    """Whether a value carries credentials: a URL with user information (``postgres://u:p@db``,
    ``redis://:p@host``, ``https://token@host``) or a ``password=``/``key=`` connection string."""
    return bool(_CREDENTIAL_URL.search(value) or _CREDENTIAL_PAIR.search(value))


def is_dropped_env(name: str, secret_patterns: tuple[str, ...], value: str | None = None) -> bool:
    """Whether an environment variable is never passed to a command: code-injection variables
    (loader, interpreter, shell and program hooks), anything whose name looks like a secret, and
    any value that carries credentials."""
    if is_code_injection_env(name):
        return True
    if value is not None and has_credentials(value):
        return True
    upper = name.upper()
    if upper in SAFE_GIT_NAMES:  # GIT_AUTHOR_NAME is an identity, not an *AUTH* secret
        return False
    return any(fnmatch.fnmatchcase(upper, p.upper()) for p in secret_patterns)


class ShellSettings(GrantSettings):
    """Settings of the shell pack. With no ``programs``, the ``shell`` tool is unavailable. The
    sandbox grant keys (``read_roots``, ``write_roots``, ``network``, ``hide``, limits,
    ``sandbox``) come from ``GrantSettings``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workspace: str | None = None
    programs: tuple[ProgramRule, ...] = ()
    timeout_s: float = Field(default=30.0, gt=0, le=3600)
    max_timeout_s: float = Field(default=300.0, gt=0, le=3600)
    max_output_bytes: int = Field(default=64 * 1024, ge=256, le=64 * 1024 * 1024)
    env_allow: tuple[str, ...] = DEFAULT_ENV_ALLOW
    env_set: dict[str, str] = {}
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
        for name, value in self.env_set.items():
            if is_dropped_env(name, self.secret_patterns) or "=" in name or not name:
                raise ValueError(
                    f"env_set cannot set {name!r}: code-injection (loader, interpreter, shell, git, "
                    "editor/pager) and secret-looking variables are never passed to commands"
                )
            if has_credentials(value):
                raise ValueError(
                    f"env_set value of {name!r} carries credentials (a URL with user:password@ or a "
                    "password=/key= pair); credentials are never passed to commands, whose output the "
                    "model reads"
                )
        for entry in self.env_allow:
            if not any(c in entry for c in "*?[") and is_dropped_env(entry, self.secret_patterns):
                raise ValueError(
                    f"env_allow entry {entry!r} is always dropped (code-injection or "
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
