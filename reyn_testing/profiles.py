"""Profiles for tests, and loading through the real loader (``reyn_core.host.load``)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reyn_core.host import LoadResult, Profile


def plugin_profile(
    plugin_id: str, settings: Mapping[str, Any] | None = None, **plugin_table: Any
) -> dict[str, Any]:
    """A profile (as a dict) that enables only ``plugin_id``, with its ``settings`` table.

    Extra keyword arguments go into ``[plugins.<id>]`` (e.g. ``prefix="x_"``,
    ``surfaces=["phase"]``, ``tools={"exclude": ["a"]}``).
    """
    table: dict[str, Any] = dict(plugin_table)
    if settings is not None:
        table["settings"] = dict(settings)
    plugins: dict[str, Any] = {"enable": [plugin_id]}
    if table:
        plugins[plugin_id] = table
    return {"features": {"plugins": True}, "plugins": plugins}


def to_profile(
    profile: Profile | Mapping[str, Any] | str | os.PathLike[str] | None, *, profile_name: str | None = None
) -> Profile:
    """A ``Profile`` from TOML text, a dict (the TOML structure), a file path, or a ``Profile``.

    ``None`` means an empty profile (discovery only, nothing enabled). Profile errors raise the
    loader's ``ProfileError`` naming the key path, exactly as for a profile file.
    """
    from reyn_core.host import Profile, load_profile

    if isinstance(profile, Profile):
        return profile
    if profile is None:
        return Profile()
    if isinstance(profile, os.PathLike):
        return load_profile(profile_file=Path(profile), profile_name=profile_name)
    if isinstance(profile, str):
        return Profile.from_toml_text(profile, source="<test profile>", profile_name=profile_name)
    if isinstance(profile, Mapping):
        return Profile.from_mapping(profile, source="<test profile>", profile_name=profile_name)
    raise TypeError(f"a profile is TOML text, a dict, a path or a Profile, not {type(profile).__name__}")


def load_with_profile(
    profile: Profile | Mapping[str, Any] | str | os.PathLike[str] | None,
    *,
    host_tools: Iterable[Any] = (),
    profile_name: str | None = None,
) -> LoadResult:
    """Run the real loader (discovery, provenance, import, settings, register, freeze) on ``profile``.

    Returns the ``LoadResult``: ``.registry`` (frozen), ``.report`` (per-plugin status and
    diagnostics) and ``.profile``. Nothing is mocked: plugins come from the installed entry points.
    """
    from reyn_core.host import load

    return load(to_profile(profile, profile_name=profile_name), host_tools=tuple(host_tools))
