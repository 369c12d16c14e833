"""A call's arguments: parsed, checked by the tool's one validator, bound to its handler's parameters.

Every call takes one path: the one validator the registry snapshot holds for the tool decides
(``PreparedTool.arguments``). A model tool's validator is its model's,
and the instance it builds is what the handler gets; for any other tool pydantic then binds the
keyword arguments (or the model argument) to the handler's annotated types. Both work on the call's
own arguments (``own_arguments``): nothing the caller holds is validated or bound, so what was
validated is what the handler gets, whatever the caller does to its dict while the call awaits.
Policy hooks see a read-only snapshot of them (``read_only``), never the bound objects.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from math import isfinite
from typing import Any

from ..context import ToolContext
from ..errors import ArgumentProblem, InvalidToolArguments
from ..jsondata import JSON_SCALAR_TYPES
from ..registry.prepared import PreparedTool
from ..tool import ToolDefinition
from ..unicode_text import has_lone_surrogate
from ..validation import (
    MAX_ARGUMENT_DEPTH,
    parse_arguments,
    unsendable_problems,
)
from ..validation.arguments import MAX_ARGUMENT_NODES, too_deep_problem, too_many_values_problem
from ..validation.messages import json_pointer


def invalid(tool: ToolDefinition, problems: Sequence[ArgumentProblem]) -> InvalidToolArguments:
    """The ``InvalidToolArguments`` listing ``problems`` (the first eight in the message)."""
    listed = "; ".join(p.render() for p in problems[:8])
    more = f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""
    return InvalidToolArguments(
        f"invalid arguments for {tool.name!r}: {listed}{more}", tool=tool.name, problems=problems
    )


# --------------------------------------------------------------------------- the call's own arguments

# Argument values that nest nothing (JSON's scalars): a dict of only these is within any depth bound,
# and copying the dict copies everything in it that could change.
_FLAT_VALUES = JSON_SCALAR_TYPES


def own_arguments(args: Any) -> tuple[Any, list[ArgumentProblem]]:
    """``parse_arguments(args)``, as JSON data no one but this call holds.

    JSON text is parsed afresh. A mapping is copied whole (``_json_copy``) into JSON's own types —
    ``dict`` with ``str`` keys, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``: a subclass
    becomes its base type's value (read with the base type's own method, so no override is asked),
    a tuple a list, and any other object (a set, bytes, a ``Decimal``, a model instance, an array
    of a numeric library) or a key that is not a string is refused at its pointer. So the caller
    mutating its containers while the call awaits (a hook, a handler, another task) changes nothing
    that was validated, bound or shown to the hooks, and every leaf the walks and the validator see
    is one JSON has: a handler gets JSON data only. The copy counts what it copies and stops at the
    bounds (``MAX_ARGUMENT_NODES`` values, ``MAX_ARGUMENT_DEPTH`` levels): shared or cyclic
    containers cost no more than the bound."""
    kind = type(args)
    if kind is dict:
        for key, value in args.items():
            if type(value) not in _FLAT_VALUES or type(key) is not str:
                break
        else:  # the common call: a flat object of scalars
            return dict(args), []
    elif kind is str:  # a model's JSON text: parsed afresh, nothing to copy
        return parse_arguments(args)
    if isinstance(args, Mapping):
        try:
            return _json_copy(args, None, 1, [0]), []
        except _NotJsonData as exc:
            return None, [exc.problem]
    return parse_arguments(args)


class _NotJsonData(Exception):
    """Ends ``_json_copy`` with the one problem it met."""

    def __init__(self, problem: ArgumentProblem) -> None:
        self.problem = problem


def _pointer(path: Any) -> str:
    """The JSON pointer of ``path``, a chain of ``(parent, key)`` pairs (None at the top)."""
    keys: list[Any] = []
    while path is not None:
        path, key = path
        keys.append(key)
    return json_pointer(tuple(reversed(keys)))


def _json_copy(value: Any, path: Any, depth: int, count: list[int]) -> Any:
    """``value`` (at nesting ``depth``, the outermost object being 1) as JSON data of JSON's own
    types, or ``_NotJsonData`` at the first thing that is not (``own_arguments``)."""
    kind = type(value)
    if kind in _FLAT_VALUES:
        return value
    count[0] += 1
    if count[0] > MAX_ARGUMENT_NODES:
        raise _NotJsonData(too_many_values_problem())
    if isinstance(value, str):  # a subclass: its text, read without its own methods
        return str.__str__(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping | list | tuple):
        if depth > MAX_ARGUMENT_DEPTH:
            raise _NotJsonData(too_deep_problem())
        if isinstance(value, Mapping):
            copied: dict[str, Any] = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    what = f"has a member name that is not a string (a {type(key).__name__})"
                    raise _NotJsonData(ArgumentProblem(_pointer(path), f"{what}; send string keys"))
                key = str.__str__(key)
                copied[key] = _json_copy(item, (path, key), depth + 1, count)
            return copied
        return [_json_copy(item, (path, i), depth + 1, count) for i, item in enumerate(value)]
    what = f"is not JSON data (a {type(value).__name__})"
    fix = "send a string, number, boolean, null, object or array"
    raise _NotJsonData(ArgumentProblem(_pointer(path), f"{what}; {fix}"))


class _ReadOnly:
    """Refuses every method that would change a hook's view of a call's arguments. (Code that goes
    around the refusals — ``dict.__setitem__(view, ...)`` — changes only that view: the handler's
    arguments were bound from the dispatcher's own copy before any hook ran.)"""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "a tool call's arguments are read-only: a policy hook may allow or deny the call, not change it"
        )


class ReadOnlyDict(_ReadOnly, dict[Any, Any]):
    """A JSON object as policy hooks see it: a ``dict`` (``json.dumps``, ``==`` and ``isinstance``
    work as for any dict) whose changing methods raise ``TypeError``. A copy is a plain, mutable dict."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _ReadOnly._refuse
    clear = pop = popitem = setdefault = update = _ReadOnly._refuse

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return {key: copy.deepcopy(item, memo) for key, item in self.items()}

    def __reduce__(self) -> Any:
        return (dict, (dict(self),))


class ReadOnlyList(_ReadOnly, list[Any]):
    """A JSON array as policy hooks see it: a ``list`` whose changing methods raise ``TypeError``."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _ReadOnly._refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _ReadOnly._refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(item, memo) for item in self]

    def __reduce__(self) -> Any:
        return (list, (list(self),))


_NO_ARGUMENTS: Mapping[str, Any] = ReadOnlyDict({})


def read_only(parsed: Any) -> Mapping[str, Any]:
    """The arguments as policy hooks see them: a read-only snapshot of ``parsed`` (the call's own,
    within the depth bound), each dict a new ``ReadOnlyDict`` and each list a new ``ReadOnlyList`` —
    never an object the handler is given. A hook that tries to change them raises ``TypeError``, and
    a ``before`` hook that raises denies the call. ``{}`` when ``parsed`` is not an object."""
    if type(parsed) is not dict:
        return _NO_ARGUMENTS
    for value in parsed.values():
        if type(value) not in _FLAT_VALUES:
            return _frozen(parsed)
    return ReadOnlyDict(parsed)


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return ReadOnlyDict({key: _frozen(item) for key, item in value.items()})
    if isinstance(value, list):
        return ReadOnlyList([_frozen(item) for item in value])
    return value


# --------------------------------------------------------------------------- validate, then bind

# A call whose arguments are a flat object of at most this many short values is validated on the
# event loop (microseconds); any other is validated in a worker thread, so that even a call at the
# size bound (``validation.size_problems``) leaves the loop answering other calls meanwhile.
_INLINE_PROPERTIES = 64
_INLINE_CHARS = 4096


def own_small(args: Any) -> tuple[Any, list[ArgumentProblem], bool]:
    """``own_arguments(args)`` and whether the result is a small flat object (at most
    ``_INLINE_PROPERTIES`` values, each a JSON scalar, strings of at most ``_INLINE_CHARS``), which is
    validated on the event loop. The common call, a small flat dict, is copied and judged in one
    pass over the copy; any other dict is copied whole by ``own_arguments``.

    A small call's arguments are JSON data here (``unsendable_problems``: no NaN or Infinity, no lone
    surrogate); any other call's are in ``arguments_in_thread``: every call passes exactly one of the
    two. The walk that says where (``unsendable_at``) runs only when the pass over the copy met a
    float that is not finite, a string holding a lone surrogate or a key that is not ASCII text: a
    flat object holds no container, so its leaves are all there is to look at."""
    owned = type(args) is not dict
    if owned:  # JSON text (parsed afresh) or another mapping (copied whole)
        parsed, problems = own_arguments(args)
        if problems or type(parsed) is not dict:
            return parsed, problems, False
    else:
        parsed = dict(args)
    if len(parsed) <= _INLINE_PROPERTIES:
        plain = True
        for key, value in parsed.items():
            kind = type(value)
            if kind is str:
                if len(value) > _INLINE_CHARS:
                    break
                if not value.isascii() and has_lone_surrogate(value):
                    plain = False
            elif kind is float:
                if not isfinite(value):
                    plain = False
            elif kind not in _FLAT_VALUES:
                break
            if type(key) is not str:
                break  # the copy refuses it (or reads a subclass's text)
            if not key.isascii():
                plain = False
        else:
            return parsed, [] if plain else unsendable_problems(parsed), True
    if owned:
        return parsed, [], False
    # a dict with nested or long values: every container copied, the depth bounded
    parsed, problems = own_arguments(args)
    return parsed, problems, False


async def arguments_in_thread(
    prepared: PreparedTool, parsed: Any, ctx: ToolContext
) -> tuple[Any, list[ArgumentProblem]]:
    """``prepared.arguments`` of a large call, in a worker thread, once its arguments are JSON data
    (``unsendable_problems``, the walk ``own_small`` asks of a small call): the walks, the wording
    and the binding are Python and let the loop run between; the library's own pass is bounded by
    the size bound."""
    import asyncio

    return await asyncio.to_thread(_json_data_arguments, prepared, parsed, ctx)


def _json_data_arguments(
    prepared: PreparedTool, parsed: Any, ctx: ToolContext
) -> tuple[Any, list[ArgumentProblem]]:
    """``prepared.arguments(parsed, ctx)`` unless ``parsed`` holds a leaf that is not JSON data: then
    that one problem, and no validator runs (what ``own_small`` answers for a small call)."""
    problems = unsendable_problems(parsed)
    if problems:
        return None, problems
    return prepared.arguments(parsed, ctx)
