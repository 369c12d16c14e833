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
    """``parse_arguments(args)``, as data no one but this call holds.

    JSON text is parsed afresh. Of a mapping, every ``dict`` and ``list`` in it — the containers JSON
    Schema looks into — is copied (as a plain ``dict`` / ``list``), so the caller mutating its own
    containers while the call awaits (a hook, a handler, another task) changes nothing that was
    validated, bound or shown to the hooks. Other values are kept: scalars cannot change, and an
    object JSON Schema does not look into (a tuple, a host's own class) is only ever accepted by a
    schema that does not constrain it.

    Copying stops one level past the depth bound, so a cyclic structure is not followed for ever;
    ``parse_arguments`` then refuses the copy as too deep. Within the bound, the copy is its answer."""
    kind = type(args)
    if kind is dict:
        for value in args.values():
            if type(value) not in _FLAT_VALUES:
                break
        else:  # the common call: a flat object of scalars
            return dict(args), []
    elif kind is str:  # a model's JSON text: parsed afresh, nothing to copy
        return parse_arguments(args)
    if isinstance(args, Mapping):
        unsure: list[Any] = []
        args = {key: _copied(value, 2, unsure) for key, value in args.items()}
        if not unsure:  # every container copied, within the bound: parse_arguments accepts it as it is
            return args, []
    return parse_arguments(args)


def _copied(value: Any, depth: int, unsure: list[Any]) -> Any:
    """``value`` (at nesting ``depth``, the outermost object being 1) with its dicts and lists copied.
    A container past the bound, or a mapping that is not a dict (kept as it is, and counted in depth by
    ``parse_arguments``), goes into ``unsure``: then ``parse_arguments`` decides about the depth."""
    if type(value) in _FLAT_VALUES:
        return value
    if isinstance(value, dict | list):
        if depth > MAX_ARGUMENT_DEPTH:
            unsure.append(value)
            return value
        if isinstance(value, dict):
            return {key: _copied(item, depth + 1, unsure) for key, item in value.items()}
        return [_copied(item, depth + 1, unsure) for item in value]
    if isinstance(value, Mapping):
        unsure.append(value)
    return value


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
            if type(key) is not str or not key.isascii():
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
