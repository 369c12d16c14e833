"""The operator's profile: which plugins are enabled and how they are narrowed, pinned and configured.

A profile is TOML. ``load_profile`` finds it at (first match wins): ``--profile-file``,
``$REYN_PROFILE_FILE``, ``./reyn.toml``, ``[tool.reyn]`` in ``./pyproject.toml``, then
``<user config dir>/reyn.toml``. No file at all means the empty profile: nothing is enabled.

Named profiles ``[profiles.<name>]`` are deep-merged over the base (tables merge key by key; lists
and values replace), selected by ``--profile`` / ``$REYN_PROFILE``. Unknown keys and wrong types are
errors naming the key path and the file: a typo must never silently change what is loaded.
"""

from __future__ import annotations

import os
import re
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from reyn_core.errors import ProfileError
from reyn_core.loading.step1_profile.profile_location import (
    PROFILE_FILE_NAME,
    find_profile_file,
    parse_toml,
    read_profile_text,
)
from reyn_core.loading.step1_profile.profile_sections import (
    AgentConfig,
    ApprovalsConfig,
    AuditConfig,
    FeaturesConfig,
    LockConfig,
    ObservabilityConfig,
    PluginConfig,
    PluginsConfig,
    ProfileSection,
    ProvenanceConfig,
    SurfacesConfig,
)


class Profile(ProfileSection):
    """An effective profile (base plus the selected named profile). Build it with ``load_profile``
    or ``Profile.from_toml_text``; ``Profile()`` is the empty profile (nothing enabled)."""

    features: FeaturesConfig = Field(default_factory=FeaturesConfig)
    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    surfaces: SurfacesConfig = Field(default_factory=SurfacesConfig)
    lock: LockConfig = Field(default_factory=LockConfig)
    provenance: ProvenanceConfig = Field(default_factory=ProvenanceConfig)
    audit: AuditConfig = Field(default_factory=AuditConfig)
    observability: ObservabilityConfig = Field(default_factory=ObservabilityConfig)
    agents: dict[str, AgentConfig] = {}
    approvals: ApprovalsConfig = Field(default_factory=ApprovalsConfig)
    profiles: dict[str, dict[str, Any]] = {}

    _source: str | None = PrivateAttr(default=None)
    _name: str | None = PrivateAttr(default=None)
    _base_dir: Path | None = PrivateAttr(default=None)

    # ------------------------------------------------------------------ reading

    @property
    def source(self) -> str | None:
        """The file this profile came from (``None`` for the empty default profile)."""
        return self._source

    @property
    def name(self) -> str | None:
        """The named profile applied over the base, if any."""
        return self._name

    @property
    def base_dir(self) -> Path:
        """Relative paths in the profile (lock, audit log) resolve against this directory: the
        profile file's directory, or the current directory."""
        return self._base_dir if self._base_dir is not None else Path.cwd()

    def resolve_path(self, value: str | os.PathLike[str]) -> Path:
        """``value`` resolved against ``base_dir`` (``~`` expanded)."""
        p = Path(value).expanduser()
        return p if p.is_absolute() else self.base_dir / p

    @property
    def enabled(self) -> tuple[str, ...]:
        """Enabled plugin ids, in profile order, without duplicates."""
        return tuple(dict.fromkeys(self.plugins.enable))

    def plugin(self, plugin_id: str) -> PluginConfig:
        """The ``[plugins.<id>]`` table (defaults when the profile has none)."""
        return self.plugins.configs.get(plugin_id) or PluginConfig()

    @property
    def lock_path(self) -> Path:
        """``[lock] path`` resolved."""
        return self.resolve_path(self.lock.path)

    def without_lock_enforcement(self) -> Profile:
        """A copy with ``[lock] enforce = false`` (``reyn plugins lock`` / ``audit`` need the real world)."""
        return self.model_copy(update={"lock": self.lock.model_copy(update={"enforce": False})})

    def describe_source(self) -> str:
        """``file`` or ``file [profile name]`` or ``(no profile file: nothing enabled)``."""
        if self._source is None:
            return "(no profile file: nothing enabled)"
        return self._source + (f" [profile {self._name}]" if self._name else "")

    # ------------------------------------------------------------------ building

    @classmethod
    def from_mapping(
        cls,
        data: Mapping[str, Any],
        *,
        source: str = "<string>",
        profile_name: str | None = None,
        key_prefix: str = "",
        base_dir: Path | None = None,
    ) -> Profile:
        """Validate a parsed TOML mapping (as in ``reyn.toml``) and apply ``profile_name``."""
        base = _validate(data, source, key_prefix)
        overlays = dict(base.profiles)
        for name, overlay in overlays.items():
            where = f"{key_prefix}profiles.{name}"
            if "profiles" in overlay:
                raise ProfileError(
                    f"{source}: {where}.profiles: named profiles cannot nest",
                    key=f"{where}.profiles",
                    file=source,
                )
            _validate(overlay, source, where + ".")
        merged: dict[str, Any] = dict(data)
        if profile_name is not None:
            if profile_name not in overlays:
                known = ", ".join(sorted(overlays)) or "none"
                raise ProfileError(
                    f"{source}: no profile named {profile_name!r} ([profiles.{profile_name}]); "
                    f"defined: {known}",
                    key=f"{key_prefix}profiles.{profile_name}",
                    file=source,
                )
            merged = _deep_merge(merged, overlays[profile_name])
        profile = _validate(merged, source, key_prefix)
        profile._source = source
        profile._name = profile_name
        profile._base_dir = base_dir
        return profile

    @classmethod
    def from_toml_text(cls, text: str, source: str = "<string>", profile_name: str | None = None) -> Profile:
        """Parse and validate profile TOML. ``source`` names the file in error messages."""
        return cls.from_mapping(parse_toml(text, source), source=source, profile_name=profile_name)


# --------------------------------------------------------------------------- validation helpers


def _deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _validate(data: Mapping[str, Any], source: str, key_prefix: str) -> Profile:
    try:
        return Profile.model_validate(dict(data))
    except ValidationError as exc:
        raise _profile_error(exc, source, key_prefix) from None


def _loc_path(loc: tuple[int | str, ...]) -> list[str]:
    parts = [str(p) for p in loc]
    # `configs` is our internal home for [plugins.<id>] tables; users never write it.
    if len(parts) >= 2 and parts[0] == "plugins" and parts[1] == "configs":
        parts = [parts[0], *parts[2:]]
    return parts


def _section_at(parts: list[str]) -> tuple[type[BaseModel] | None, bool]:
    """The model class of the table at ``parts`` and whether it is ``[plugins]`` (free-form ids)."""
    cls: Any = Profile
    i = 0
    while i < len(parts):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
            return None, False
        if cls is PluginsConfig:
            cls, i = PluginConfig, i + 1  # parts[i] is a plugin id
            continue
        field = cls.model_fields.get(parts[i])
        if field is None:
            return None, False
        cls = _unwrap(field.annotation)
        i += 1
    if isinstance(cls, type) and issubclass(cls, BaseModel):
        return cls, cls is PluginsConfig
    return None, False


def _unwrap(annotation: Any) -> Any:
    for arg in typing.get_args(annotation) or (annotation,):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return annotation


def _profile_error(exc: ValidationError, source: str, key_prefix: str) -> ProfileError:
    errors = exc.errors(include_url=False)
    err = errors[0]
    parts = _loc_path(tuple(err.get("loc", ())))
    key = key_prefix + ".".join(parts)
    key = re.sub(r"\.(\d+)(?=\.|$)", r"[\1]", key)  # list items as `surfaces[0]`
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    if err.get("type") == "extra_forbidden":
        section, is_plugins = _section_at(parts[:-1])
        allowed = [k for k in (section.model_fields if section else {}) if k != "configs"]
        import difflib  # only to word an error

        near = difflib.get_close_matches(parts[-1], allowed, n=1)
        suggestion = f"; did you mean {near[0]!r}?" if near else ""
        listed = ", ".join(allowed) + (", or a [plugins.<id>] table" if is_plugins else "")
        message = f"{source}: unknown key {key!r}{suggestion} (allowed here: {listed}){more}"
    else:
        value = err.get("input")
        got = f", got {type(value).__name__} {value!r:.60}" if err.get("type") != "missing" else ""
        message = f"{source}: {key}: {err.get('msg', 'invalid')}{got}{more}"
    return ProfileError(message, key=key, file=source)


# --------------------------------------------------------------------------- reading the file
# (finding it: loading/step1_profile/profile_location.py, which needs no pydantic)


def _from_file(path: Path, profile_name: str | None) -> Profile:
    text = read_profile_text(path)
    return Profile.from_mapping(
        parse_toml(text, str(path)),
        source=str(path),
        profile_name=profile_name,
        base_dir=path.resolve().parent,
    )


def load_profile(
    profile_file: str | os.PathLike[str] | None = None,
    profile_name: str | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> Profile:
    """Find, read and validate the profile (see the module docstring for the search order).

    ``profile_name`` defaults to ``$REYN_PROFILE``. Raises ``ProfileError`` naming the key and file.
    """
    name = profile_name if profile_name is not None else os.environ.get("REYN_PROFILE") or None
    found = find_profile_file(profile_file, cwd)
    if found is None:
        if name is not None:
            raise ProfileError(
                f"profile {name!r} was requested but no profile file was found "
                f"(looked for --profile-file, $REYN_PROFILE_FILE, ./{PROFILE_FILE_NAME}, "
                "[tool.reyn] in ./pyproject.toml and the user config dir)"
            )
        profile = Profile()
        profile._base_dir = Path(cwd).resolve() if cwd is not None else None
        return profile
    path, is_pyproject = found
    if not is_pyproject:
        return _from_file(path, name)
    data = parse_toml(read_profile_text(path), str(path))
    tool = data.get("tool")
    section = tool.get("reyn") if isinstance(tool, Mapping) else None
    if not isinstance(section, Mapping):
        raise ProfileError(f"{path}: has no [tool.reyn] table", key="tool.reyn", file=str(path))
    return Profile.from_mapping(
        section, source=str(path), profile_name=name, key_prefix="tool.reyn.", base_dir=path.resolve().parent
    )
