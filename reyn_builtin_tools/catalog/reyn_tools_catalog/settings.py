"""The catalog pack's settings: ``[plugins.catalog.settings]`` in the profile."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class CatalogSettings(BaseModel):
    """Where skills and agents come from. Relative folders resolve against the workspace.
    Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    skill_dirs: list[str] = Field(default=[], description="folders searched for SKILL.md files")
    agent_dirs: list[str] = Field(default=[], description="folders of agent .md files")
    description_limit: int = Field(
        default=200,
        ge=20,
        le=4000,
        description="list_skills / list_agents cut descriptions to this many characters",
    )
    max_file_bytes: int = Field(
        default=256 * 1024,
        ge=1024,
        le=16 * 1024 * 1024,
        description="larger skill or agent files are refused",
    )

    def resolve(self, folders: list[str], workspace: Path) -> list[Path]:
        """``folders`` with ``~`` expanded, relative ones joined to ``workspace``."""
        out = []
        for f in folders:
            p = Path(f).expanduser()
            out.append(p if p.is_absolute() else workspace / p)
        return out
