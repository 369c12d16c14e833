"""The one place ``reyn`` reports an error: one line of text on stderr, or under ``--json`` one JSON
object on stderr with the same exit code.

Every command and ``main`` report through ``report_error`` (argparse's usage errors too, through
``ReynArgumentParser.error``), so a script that passed ``--json`` never has to parse prose:

    {"error": {"code": "usage", "exit_code": 2, "message": "...", "usage": "usage: reyn tools call ..."}}

``code`` is the error's stable diagnostic code when it has one (``RC003`` for a profile error), else
a kind (``usage``, ``failed``, ``internal``, ``interrupted``). Stdout stays the command's output.
"""

from __future__ import annotations

import functools
import json
import sys
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    import argparse

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

_state = {"json": False}


def set_json_mode(on: bool) -> None:
    """Report errors as JSON objects (``main`` sets it from ``--json`` before anything can fail)."""
    _state["json"] = on


def json_mode() -> bool:
    """Whether errors are reported as JSON objects."""
    return _state["json"]


def one_line(text: object) -> str:
    """``text`` with its line breaks folded: an error is one line."""
    folded = " ".join(str(text).split("\n")).strip()
    return folded or type(text).__name__


def report_error(
    message: str,
    *,
    code: str = "usage",
    exit_code: int = EXIT_USAGE,
    prefix: str = "reyn: error: ",
    usage: str | None = None,
    **extra: Any,
) -> int:
    """Print one error (text, or a JSON object under ``--json``) on stderr; return ``exit_code``.

    ``usage`` is printed before the text line (argparse's habit) and kept as a field in JSON;
    ``extra`` fields (e.g. ``hint``) appear only in JSON."""
    if _state["json"]:
        body: dict[str, Any] = {"code": code, "exit_code": exit_code, "message": one_line(message)}
        if usage:
            body["usage"] = usage.strip()
        body.update({k: v for k, v in extra.items() if v is not None})
        sys.stderr.write(json.dumps({"error": body}, ensure_ascii=False) + "\n")
    else:
        if usage:
            sys.stderr.write(usage if usage.endswith("\n") else usage + "\n")
        sys.stderr.write(f"{prefix}{one_line(message)}\n")
    return exit_code


class UsageError(Exception):
    """A command line argparse refused; ``main`` reports it through ``report_error`` (exit 2)."""

    def __init__(self, message: str, usage: str, prog: str) -> None:
        super().__init__(message)
        self.message = message
        self.usage = usage
        self.prog = prog


@functools.cache
def argument_parser_class() -> type[argparse.ArgumentParser]:
    """``argparse.ArgumentParser`` whose ``error`` raises ``UsageError`` instead of printing and
    exiting, so a usage error is reported like every other error (subparsers inherit the class)."""
    import argparse

    class ReynArgumentParser(argparse.ArgumentParser):
        subcommands: Any = None  # the action add_subparsers returned, to walk the command tree

        def add_subparsers(self, **kwargs: Any) -> Any:
            self.subcommands = super().add_subparsers(**kwargs)
            return self.subcommands

        def error(self, message: str) -> NoReturn:
            raise UsageError(message, self.format_usage(), self.prog)

    return ReynArgumentParser


__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "argument_parser_class",
    "json_mode",
    "one_line",
    "report_error",
    "set_json_mode",
]
