"""A table of diagnostic codes, kept as data: a TOML file shipped in a package (the core's is
``reyn_core/codes.toml``, which describes its keys), read and checked on first use.

The same file is the one source of what ``Diagnostic.make`` fills in (severity, hint) and of the code
tables of docs/diagnostics.md (``make docs-codes`` writes them from it). Reading it is lazy: building a
``CodeTable`` reads nothing, so ``import reyn_core`` never parses TOML; the first lookup does, once.
A malformed entry is a ``CodeTableError`` naming the file and the code, never a silently partial table.

A broken copy in an installation (an edited or damaged file) is found at a defined point:
``CodeTable.check`` — ``load()`` checks the core's table before anything else, a backend checks its own
when it is imported, and ``reyn doctor`` reports each. The outcome is kept: a broken table raises the
same error on every lookup after, without reading the file again.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
CODE_PATTERN = re.compile(r"R[A-Z]{1,2}[0-9]{3}")
"""A code: ``R``, one or two capital letters (the family), three digits."""

_REQUIRED = ("severity", "title", "hint", "example")
_ALSO_KEYS = frozenset({"severity", "hint", "example"})


class CodeTableError(ValueError):
    """A code table file is not valid TOML, or an entry is malformed (the message names the code)."""


@dataclass(frozen=True, slots=True)
class CodeVariant:
    """The same code reported at another severity, with its own example and hint."""

    severity: Severity
    hint: str
    example: str


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """What a code means: its severity, a short title, and the generic fix (``hint``); ``example``
    (Markdown, for the docs) and ``also`` (the code at other severities) complete its doc row."""

    severity: Severity
    title: str
    hint: str
    example: str = field(default="", compare=False, repr=False)
    also: tuple[CodeVariant, ...] = field(default=(), compare=False, repr=False)

    def hint_at(self, severity: str) -> str:
        """The fix of this code when reported at ``severity`` (a variant's, else the code's own)."""
        return next((v.hint for v in self.also if v.severity == severity), self.hint)


def _text(entry: Mapping[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CodeTableError(f"{where}: {key!r} must be a non-empty string, got {value!r}")
    return value


def _severity(entry: Mapping[str, Any], where: str) -> Severity:
    value = _text(entry, "severity", where)
    if value not in SEVERITIES:
        raise CodeTableError(f"{where}: severity {value!r} is not one of {', '.join(SEVERITIES)}")
    return cast(Severity, value)


def _variants(code: str, code_info: CodeInfo, raw: Any, where: str) -> tuple[CodeVariant, ...]:
    if not isinstance(raw, list):
        raise CodeTableError(f"{where}: 'also' must be an array of tables ([[{code}.also]])")
    out: list[CodeVariant] = []
    for index, item in enumerate(raw, 1):
        at = f"{where}: also #{index}"
        if not isinstance(item, dict):
            raise CodeTableError(f"{at}: must be a table, got {item!r}")
        unknown = sorted(set(item) - _ALSO_KEYS)
        if unknown:
            raise CodeTableError(f"{at}: unknown keys {unknown}; known: {', '.join(sorted(_ALSO_KEYS))}")
        severity = _severity(item, at)
        if severity in {code_info.severity, *(v.severity for v in out)}:
            raise CodeTableError(f"{at}: severity {severity!r} is already described for this code")
        hint = _text(item, "hint", at) if "hint" in item else code_info.hint
        out.append(CodeVariant(severity, hint, _text(item, "example", at)))
    return tuple(out)


def parse_code_table(text: str, source: str) -> dict[str, CodeInfo]:
    """The codes of a code table file's ``text``, in file order; ``CodeTableError`` naming ``source``
    and the code for anything malformed (an unknown key, a missing or empty field, a bad severity)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CodeTableError(f"{source}: invalid TOML: {exc}") from None
    codes: dict[str, CodeInfo] = {}
    for code, entry in document.items():
        where = f"{source}: {code}"
        if not CODE_PATTERN.fullmatch(code):
            raise CodeTableError(f"{where}: not a code (R, one or two capital letters, three digits)")
        if not isinstance(entry, dict):
            raise CodeTableError(f"{where}: must be a table ([{code}]), got {entry!r}")
        unknown = sorted(set(entry) - {*_REQUIRED, "also"})
        if unknown:
            raise CodeTableError(f"{where}: unknown keys {unknown}; known: {', '.join(_REQUIRED)}, also")
        severity = _severity(entry, where)
        title, hint, example = (_text(entry, key, where) for key in _REQUIRED[1:])
        info = CodeInfo(severity, title, hint, example)
        if "also" in entry:
            info = CodeInfo(severity, title, hint, example, _variants(code, info, entry["also"], where))
        codes[code] = info
    return codes


class CodeTable(Mapping[str, CodeInfo]):
    """The codes of the file ``resource`` in the package ``package``: a read-only mapping of code to
    ``CodeInfo``, read and checked on first use (``CodeTableError`` then, if the file is malformed)."""

    __slots__ = ("_codes", "_error", "_package", "_resource")

    def __init__(self, package: str, resource: str = "codes.toml") -> None:
        self._package = package
        self._resource = resource
        self._codes: dict[str, CodeInfo] | None = None
        self._error: CodeTableError | None = None

    @property
    def source(self) -> str:
        """Where the table is read from, as ``package/resource``."""
        return f"{self._package}/{self._resource}"

    @property
    def loaded(self) -> bool:
        """Whether the file was read yet (it is on the first lookup)."""
        return self._codes is not None

    def check(self) -> None:
        """Read and check the file now, if that was not done yet: a ``CodeTableError`` naming the
        installed file, what is wrong in it and what to do. Raised again, the same, on every later
        check or lookup of a broken table (the file is read once)."""
        self._table()

    def _table(self) -> dict[str, CodeInfo]:
        if self._codes is None:
            if self._error is None:
                self._codes, self._error = self._read()
            if self._error is not None:
                raise self._error
            assert self._codes is not None
        return self._codes

    def _read(self) -> tuple[dict[str, CodeInfo] | None, CodeTableError | None]:
        """The file's codes, or the error of a broken one. The file is read beside the package's
        ``__init__`` through the loader that would import it (``get_data``: a folder, a zip archive
        or any other importer), without importing the package (``reyn doctor`` checks a backend's
        table before any load verifies and imports the backend)."""
        import importlib.util
        import os

        path: str | None = None
        try:
            spec = importlib.util.find_spec(self._package)
            if spec is None:
                raise OSError("the package is not installed")
            folders = list(spec.submodule_search_locations or ())
            get_data = getattr(spec.loader, "get_data", None)
            if not folders or get_data is None:
                raise OSError(f"no package folder to read {self._resource} from (loader {spec.loader!r})")
            for folder in folders:
                candidate = os.path.join(folder, self._resource)
                try:
                    data: bytes = get_data(candidate)
                except OSError:
                    continue
                path = candidate
                return parse_code_table(data.decode("utf-8"), candidate), None
            raise OSError(f"no such file in {folders}")
        except (OSError, ImportError, ValueError, CodeTableError) as exc:  # UnicodeDecodeError: ValueError
            problem = (
                str(exc)
                if isinstance(exc, CodeTableError)
                else f"{path or self.source}: cannot be read: {exc}"
            )
            return None, CodeTableError(
                f"the diagnostic code table of {self._package} is damaged: {problem}; reinstall the "
                f"distribution that ships {self._package}"
            )

    def __getitem__(self, code: str) -> CodeInfo:
        return self._table()[code]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return f"CodeTable({self.source!r})"


CODES = CodeTable("reyn_core", "codes.toml")
"""Every code the core reports, mapped to its ``CodeInfo`` (public as
``reyn_core.host.DIAGNOSTIC_CODES``): what ``Diagnostic.make`` and a ``ToolRegistrationError`` without
a hint of its own take their defaults from, and what docs/diagnostics.md's code tables are written from."""


__all__ = [
    "CODES",
    "CODE_PATTERN",
    "SEVERITIES",
    "CodeInfo",
    "CodeTable",
    "CodeTableError",
    "CodeVariant",
    "Severity",
    "parse_code_table",
]
