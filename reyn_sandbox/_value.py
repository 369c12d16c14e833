"""The leaf's value types: immutable, compared and hashed by type and fields, without `dataclasses`.

`dataclasses` costs the launcher ~10 ms a start (it imports `inspect`, which brings `ast`, `dis`,
`tokenize`), a third of its imports. A `Value` subclass (of `Value` alone: a value type cannot be
subclassed in turn, see `__init_subclass__`) names its fields in `__slots__` and writes
a typed `__init__`, its keywords named as the fields, that sets them with `_init`; it then holds
exactly those fields, refuses any assignment or deletion, is equal only to an instance of its very
class with equal fields (as a frozen dataclass), hashes like that, and shows itself as
`Name(field=value, …)`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a launch ~15 ms
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _V = TypeVar("_V", bound="Value")


class Value:
    """Base of an immutable value type whose fields are its `__slots__` (see the module)."""

    __slots__: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A value type derives from `Value` alone: its fields are its own `__slots__`, which is all
        `_init`, `as_dict`, `_key` and `__repr__` read — a subclass of one would hold its base's
        fields unset, unshown and uncompared. So subclassing one is refused, when the class is made."""
        super().__init_subclass__(**kwargs)
        for base in cls.__mro__[1:]:
            if base is not Value and issubclass(base, Value):
                raise TypeError(
                    f"{cls.__name__}: {base.__name__} is a value type, which cannot be subclassed"
                )

    def _init(self, **values: object) -> None:
        """Set every field, once, from ``__init__``; a field left out or one not declared is an error."""
        if set(values) != set(self.__slots__):
            raise TypeError(f"{type(self).__name__} sets exactly {self.__slots__}, not {sorted(values)}")
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The fields (by name, sorted)."""
        return cls.__slots__

    def as_dict(self) -> dict[str, Any]:
        """Field → value (values as they are: tuples stay tuples)."""
        return {name: getattr(self, name) for name in self.__slots__}

    def replace(self: _V, **changes: Any) -> _V:
        """A new instance with ``changes`` (checked by ``__init__`` as any other)."""
        return type(self)(**{**self.as_dict(), **changes})

    def _key(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({shown})"

    def __reduce__(self) -> tuple[object, tuple[type[Value], dict[str, Any]]]:
        # pickle and copy rebuild through __init__ (checked as any other): no state set from outside.
        return _rebuild, (type(self), self.as_dict())

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot assign to {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")


def _rebuild(cls: type[_V], values: dict[str, Any]) -> _V:
    return cls(**values)
