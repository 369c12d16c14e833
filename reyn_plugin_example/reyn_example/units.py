"""Unit conversion tables. Pure data and arithmetic: no imports beyond the standard library."""

from __future__ import annotations

from typing import Literal

# Factor to the dimension's base unit (metre, kilogram, second, byte, litre).
LINEAR: dict[str, tuple[str, float]] = {
    # length
    "mm": ("length", 0.001),
    "cm": ("length", 0.01),
    "m": ("length", 1.0),
    "km": ("length", 1000.0),
    "in": ("length", 0.0254),
    "ft": ("length", 0.3048),
    "yd": ("length", 0.9144),
    "mi": ("length", 1609.344),
    # mass
    "mg": ("mass", 1e-6),
    "g": ("mass", 0.001),
    "kg": ("mass", 1.0),
    "t": ("mass", 1000.0),
    "oz": ("mass", 0.028349523125),
    "lb": ("mass", 0.45359237),
    # time
    "ms": ("time", 0.001),
    "s": ("time", 1.0),
    "min": ("time", 60.0),
    "h": ("time", 3600.0),
    "day": ("time", 86400.0),
    "week": ("time", 604800.0),
    # data
    "B": ("data", 1.0),
    "kB": ("data", 1e3),
    "MB": ("data", 1e6),
    "GB": ("data", 1e9),
    "KiB": ("data", 1024.0),
    "MiB": ("data", 1024.0**2),
    "GiB": ("data", 1024.0**3),
    # volume
    "ml": ("volume", 0.001),
    "l": ("volume", 1.0),
    "gal": ("volume", 3.785411784),
}
TEMPERATURE = ("C", "F", "K")

Unit = Literal[
    "mm",
    "cm",
    "m",
    "km",
    "in",
    "ft",
    "yd",
    "mi",
    "mg",
    "g",
    "kg",
    "t",
    "oz",
    "lb",
    "ms",
    "s",
    "min",
    "h",
    "day",
    "week",
    "B",
    "kB",
    "MB",
    "GB",
    "KiB",
    "MiB",
    "GiB",
    "ml",
    "l",
    "gal",
    "C",
    "F",
    "K",
]


def dimension(unit: str) -> str:
    """The dimension of ``unit`` (``length``, ``mass``, ``temperature``, ...)."""
    if unit in TEMPERATURE:
        return "temperature"
    return LINEAR[unit][0]


def _to_kelvin(value: float, unit: str) -> float:
    if unit == "C":
        return value + 273.15
    if unit == "F":
        return (value - 32.0) * 5.0 / 9.0 + 273.15
    return value


def _from_kelvin(value: float, unit: str) -> float:
    if unit == "C":
        return value - 273.15
    if unit == "F":
        return (value - 273.15) * 9.0 / 5.0 + 32.0
    return value


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert ``value`` between two units of the same dimension. Raises ValueError otherwise."""
    a, b = dimension(from_unit), dimension(to_unit)
    if a != b:
        raise ValueError(f"cannot convert {a} ({from_unit}) to {b} ({to_unit})")
    if a == "temperature":
        kelvin = _to_kelvin(value, from_unit)
        if kelvin < 0:
            raise ValueError(f"{value} {from_unit} is below absolute zero")
        return _from_kelvin(kelvin, to_unit)
    return value * LINEAR[from_unit][1] / LINEAR[to_unit][1]
