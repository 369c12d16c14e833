"""Model-supplied patterns, compiled for a linear-time engine (RE2, from ``google-re2``).

A backtracking engine (Python's ``re``) can take exponential time on a pattern such as ``(a+)+$``;
RE2 matches in time linear in the text for every pattern it accepts, and refuses what it cannot do
that way (backreferences, lookaround). ``grep_files`` regexes and the regexes globs are translated
to both go through here, so no pattern a model writes can stall a worker or the host.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import re2

from reyn_core import ArgumentProblem, InvalidToolArguments

MAX_PATTERN_CHARS = 1000  # a regex or glob longer than this is refused
MAX_PROGRAM_BYTES = 8 * 1024 * 1024  # RE2's memory budget for one compiled pattern
# RE2 is linear in the text, but its constant grows with the program: when its DFA runs out of
# memory it falls back to simulating every instruction per byte (~60 ns per byte and instruction
# here, so a 900-instruction pattern takes ~55 s on 1 MB). The text is therefore searched in chunks
# of about WORK_UNIT / programsize bytes — tens of milliseconds at worst — and the caller's
# ``stop()`` is asked between chunks: the work inside one file is bounded, not only between files.
WORK_UNIT = 800_000
MIN_CHUNK_BYTES = 1024
MAX_CHUNK_BYTES = 1024 * 1024

RE2_SYNTAX = (
    "patterns use RE2 syntax: Python-like classes, groups, alternation, anchors and repetition "
    "(counts up to 1000), but no backreferences, lookahead/lookbehind, possessive quantifiers or "
    "atomic groups"
)

# (fragment of RE2's error, what the construct is called, what to write instead)
_UNSUPPORTED: tuple[tuple[str, str, str], ...] = (
    ("(?=", "lookahead (?=...)", "match the text itself, or search for it separately"),
    ("(?!", "negative lookahead (?!...)", "search for the text and leave out what you do not want"),
    ("(?<=", "lookbehind (?<=...)", "include the preceding text in the pattern"),
    ("(?<!", "negative lookbehind (?<!...)", "include the preceding text in the pattern"),
    ("(?P=", "a named backreference (?P=name)", "repeat the sub-pattern instead of referring to it"),
    ("(?>", "an atomic group (?>...)", "use a plain group (...)"),
    ("(?#", "an inline comment (?#...)", "leave the comment out"),
)


def invalid(field: str, message: str) -> InvalidToolArguments:
    """An argument error pointing at ``/field``."""
    return InvalidToolArguments(message, problems=[ArgumentProblem(f"/{field}", message)])


def _options(*, ignore_case: bool = False, dot_nl: bool = False) -> Any:
    options = re2.Options()
    options.log_errors = False  # the error is reported to the model, not written to stderr
    options.max_mem = MAX_PROGRAM_BYTES
    options.case_sensitive = not ignore_case
    options.dot_nl = dot_nl
    return options


def _explain(pattern: str, detail: str) -> str:
    """Name the construct RE2 refused, from its error message and the pattern."""
    for fragment, name, instead in _UNSUPPORTED:
        if fragment in detail or (fragment == "(?P=" and fragment in pattern):
            return f"{name} is not supported ({instead}); {RE2_SYNTAX}"
    if "invalid escape sequence: \\" in detail:
        escape = detail.rsplit(": ", 1)[-1]
        if escape[1:2].isdigit():
            return (
                f"the backreference {escape} is not supported (repeat the sub-pattern instead of "
                f"referring to it); {RE2_SYNTAX}"
            )
        if escape == "\\Z":
            return f"\\Z is not supported: write \\z for the end of the text; {RE2_SYNTAX}"
        return f"the escape {escape} is not supported; {RE2_SYNTAX}"
    if "bad repetition operator: " in detail and detail.endswith(("++", "*+", "?+", "}+")):
        return f"possessive quantifiers ({detail.rsplit(': ', 1)[-1]}) are not supported; {RE2_SYNTAX}"
    if "invalid repetition size" in detail:
        return f"{detail}: repetition counts may be at most 1000, also when nested; {RE2_SYNTAX}"
    if "pattern too large" in detail:
        return "the pattern is too large to compile; use a shorter, simpler pattern"
    if "invalid perl operator: (?" in detail:
        return f"{detail}; flags may be set with (?i), (?s), (?m), (?U) only; {RE2_SYNTAX}"
    return f"{detail}; {RE2_SYNTAX}"


def compile_pattern(pattern: str, *, field: str, what: str, ignore_case: bool = False) -> Any:
    """Compile a model's regular expression with RE2, or raise ``InvalidToolArguments`` naming the
    construct that cannot be matched in linear time and what is allowed instead."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise invalid(field, f"the {what} is {len(pattern)} characters; the limit is {MAX_PATTERN_CHARS}")
    if not pattern.isascii():
        try:
            pattern.encode("utf-8")
        except UnicodeEncodeError:
            raise invalid(
                field, f"the {what} is not valid UTF-8 text (it contains lone surrogates)"
            ) from None
    try:
        return re2.compile(pattern, _options(ignore_case=ignore_case))
    except re2.error as exc:
        raw = exc.args[0] if exc.args else ""
        detail = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        raise invalid(field, f"invalid {what} {pattern[:100]!r}: {_explain(pattern, detail)}") from None


def compile_translated(regex: str) -> Any:
    """Compile a regex we built ourselves (from a glob): ``.`` matches any character, newlines too."""
    return re2.compile(regex, _options(dot_nl=True))


def _needs_each_line(pattern: str) -> bool:
    """Whether ``pattern`` must be tried line by line: ``\\A``/``\\z`` (start/end of the text: of
    each line when lines are searched one by one) or a flag group turning multi-line mode off."""
    if "\\A" in pattern or "\\z" in pattern:
        return True
    at = pattern.find("(?")
    while at != -1:
        flags = pattern[at + 2 : at + 12]
        run = flags[: len(flags) - len(flags.lstrip("imsU-"))]  # the flag letters after "(?"
        if "m" in run.partition("-")[2]:  # ... turning multi-line mode off
            return True
        at = pattern.find("(?", at + 2)
    return False


class LineSearch:
    """A regex searched in each line of a text, as ``grep`` does, in time linear in the text.

    Calling RE2 once per line costs microseconds of call overhead per line, so the whole text is
    searched at once with a multi-line copy of the pattern that can never match a newline
    (``never_nl``); each line it finds is then confirmed with the pattern itself, on the line alone,
    so results are exactly those of searching every line separately. Patterns whose meaning
    depends on seeing one line alone (``\\A``, ``\\z``, ``(?-m)``) are searched line by line.
    """

    def __init__(self, pattern: str, *, field: str, what: str, ignore_case: bool = False) -> None:
        self.regex = compile_pattern(pattern, field=field, what=what, ignore_case=ignore_case)
        self.whole: Any = None
        if not _needs_each_line(pattern):
            options = _options(ignore_case=ignore_case)
            options.never_nl = True
            try:
                self.whole = re2.compile("(?m)" + pattern, options)
            except re2.error:  # not expected: the pattern itself compiled; search line by line
                self.whole = None

    def line_matches(self, line: str) -> bool:
        """Whether the pattern occurs in ``line``."""
        return self.regex.search(line) is not None

    @property
    def chunk_bytes(self) -> int:
        """How much text one bounded unit of work searches (see ``WORK_UNIT``)."""
        size = max(int(self.regex.programsize), int(getattr(self.whole, "programsize", 0) or 0), 1)
        return max(MIN_CHUNK_BYTES, min(MAX_CHUNK_BYTES, WORK_UNIT // size))

    def candidates(self, lines: list[str], stop: Callable[[], bool] = lambda: False) -> Iterator[int]:
        """Indexes of the lines that may match, in order: a superset of the matching lines. The
        lines are searched a chunk (``chunk_bytes``, whole lines) at a time; when ``stop()`` says so
        before a chunk, the search ends there (the caller reports a partial result)."""
        if self.whole is None:
            for i in range(len(lines)):
                if stop():
                    return
                yield i
            return
        first, limit = 0, self.chunk_bytes
        while first < len(lines):
            if stop():
                return
            last, size = first, 0
            while last < len(lines) and (size == 0 or size + len(lines[last]) < limit):
                size += len(lines[last]) + 1
                last += 1
            yield from (first + i for i in self._chunk_candidates(lines[first:last]))
            first = last

    def _chunk_candidates(self, lines: list[str]) -> Iterator[int]:
        """Candidate indexes within one chunk of lines: one RE2 search of the joined chunk per hit."""
        data = "\n".join(lines).encode("utf-8")
        pos = line = 0
        while pos <= len(data):
            found = self.whole.search(data, pos)
            if found is None:
                return
            start = found.start()
            line += data.count(b"\n", pos, start)
            yield line
            newline = data.find(b"\n", start)
            if newline == -1:
                return
            pos, line = newline + 1, line + 1
