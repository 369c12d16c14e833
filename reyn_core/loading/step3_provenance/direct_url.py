"""PEP 610 ``direct_url.json``: how a distribution was installed (index, wheel, directory, editable, vcs)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import Distribution
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from reyn_core.jsondata import read_json
from reyn_core.loading.step3_provenance.digest import is_sha256_hex

# A PEP 610 document holds a dozen values; far more is no install record (docs/decisions.md)
MAX_DIRECT_URL_VALUES = 1_000

SourceKind = Literal["index", "wheel", "directory", "editable", "vcs"]
SOURCE_KINDS: tuple[str, ...] = ("index", "wheel", "directory", "editable", "vcs")


@dataclass(frozen=True, slots=True)
class SourceInfo:
    kind: SourceKind
    url: str | None = None
    commit: str | None = None
    artifact_sha256: str | None = None
    problems: tuple[str, ...] = ()


def source_of(dist: Distribution) -> SourceInfo:
    """The PEP 610 source of an install; no ``direct_url.json`` means an index install."""
    text = dist.read_text("direct_url.json")
    if text is None:
        return SourceInfo("index")
    try:  # a distribution's metadata: bounded in values, JSON's numbers only
        data = read_json(text, MAX_DIRECT_URL_VALUES)
        if not isinstance(data, dict):
            raise ValueError("not an object")
    except (ValueError, RecursionError) as exc:
        return SourceInfo("index", problems=(f"direct_url.json is malformed ({exc}); source unknown",))
    url = data.get("url") if isinstance(data.get("url"), str) else None
    vcs = data.get("vcs_info")
    if isinstance(vcs, dict):
        commit = vcs.get("commit_id")
        return SourceInfo("vcs", url, commit if isinstance(commit, str) else None)
    info = data.get("dir_info")
    if isinstance(info, dict):
        return SourceInfo("editable" if info.get("editable") is True else "directory", url)
    archive = data.get("archive_info")
    if isinstance(archive, dict):
        return SourceInfo("wheel", url, artifact_sha256=archive_sha256(archive))
    return SourceInfo(
        "index", url, problems=("direct_url.json names no known source (vcs_info, dir_info, archive_info)",)
    )


def archive_sha256(archive: Mapping[str, Any]) -> str | None:
    hashes = archive.get("hashes")
    if isinstance(hashes, dict) and isinstance(hashes.get("sha256"), str):
        value = hashes["sha256"].lower()
        return value if is_sha256_hex(value) else None
    legacy = archive.get("hash")
    if isinstance(legacy, str) and legacy.startswith("sha256="):
        value = legacy.removeprefix("sha256=").lower()
        return value if is_sha256_hex(value) else None
    return None


def file_url_path(url: str | None) -> Path | None:
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parts.path))


__all__ = ["SOURCE_KINDS", "SourceInfo", "SourceKind", "file_url_path", "source_of"]
