"""Lazy exports for a package ``__init__``: names imported from their module on first access, so
importing the package stays light."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str | tuple[str, ...]], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: the first access to an exported name imports
    its module and caches the value in ``namespace``.

    ``exports`` maps a name to the module that defines it (``"pkg.mod"``, or ``"pkg.mod:attr"`` when
    the name differs), or a module to the tuple of names it defines (``{"pkg.mod": ("A", "b")}``).
    A module may be relative to ``package`` (``".mod"``)."""
    where_of: dict[str, str] = {}
    for key, value in exports.items():
        if isinstance(value, str):
            where_of[key] = value
        else:
            where_of.update(dict.fromkeys(value, key))

    def __getattr__(name: str) -> Any:
        where = where_of.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attr = where.partition(":")
        value = getattr(importlib.import_module(module, package), attr or name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(where_of))

    return __getattr__, __dir__
