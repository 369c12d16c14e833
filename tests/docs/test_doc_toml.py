"""Every ```toml block in docs/ and the READMEs parses, and each is checked by the reader it is for.

- Every block parses with ``tomllib``.
- A block whose top-level keys are all profile sections (``[features]``, ``[plugins]``,
  ``[surfaces]``, ``[lock]``, ``[provenance]``, ``[audit]``, ``[observability]``, ``[profiles]``) is a
  profile: it must pass
  ``reyn_core.host.Profile.from_toml_text`` (typos, wrong types and unknown keys fail).
- A block with top-level ``version`` and ``[plugins.*]`` tables is a ``reyn.lock``: it must pass
  ``reyn_core.loading.step3_provenance.lock_file.read_lock``.
- A block with ``name`` and ``task`` is a ``reyn phase run`` file: it must pass ``read_phase_file``.
- A block with top-level ``version`` and ``[permissions]`` is a plugin's ``reyn_permissions.toml``: it
  must pass ``reyn_core.loading.permissions.parse_declaration``.
- A block whose first line is ``# fragment`` is a piece of a larger file: only ``tomllib``-parsed.

Elision: in a profile, a digest written ``"sha256:…"`` stands for any digest (it is replaced by a
well-formed one before validation); any other ``…`` is checked as written.
"""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

import reyn_core
import reyn_core.host
from reyn_core.loading.permissions import DeclarationError, parse_declaration
from reyn_core.loading.step3_provenance.lock_file import read_lock
from reyn_loops.cli.phase import read_phase_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    *sorted((ROOT / "docs").rglob("*.md")),
    ROOT / "README.md",
    ROOT / "reyn_plugin_example" / "README.md",
]
FENCE = re.compile(r"^(?P<indent>[ \t]*)```toml[ \t]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
PROFILE_SECTIONS = {
    "features",
    "plugins",
    "surfaces",
    "lock",
    "provenance",
    "audit",
    "observability",
    "profiles",
}
ELIDED_DIGEST = re.compile(r'"sha256:…"')


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    text: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def toml_blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    rel = page.relative_to(ROOT).as_posix()
    return [
        Block(rel, text.count("\n", 0, m.start("body")) + 1, textwrap.dedent(m.group("body")))
        for m in FENCE.finditer(text)
    ]


def kind_of(block: Block, data: dict) -> str:
    first = block.text.lstrip().splitlines()[0] if block.text.strip() else ""
    if first.strip().lower() == "# fragment":
        return "fragment"
    if data and set(data) <= PROFILE_SECTIONS:
        return "profile"
    if "version" in data and isinstance(data.get("plugins"), dict):
        return "lock"
    if {"name", "task"} <= set(data):
        return "phase"
    if "version" in data and "permissions" in data:
        return "declaration"
    return "other"


BLOCKS = [b for page in SOURCES if page.exists() for b in toml_blocks(page)]


def test_toml_blocks_are_found_in_docs_and_readmes():
    pages = {b.page for b in BLOCKS}
    assert {"docs/profiles.md", "README.md", "reyn_plugin_example/README.md", "docs/surfaces.md"} <= pages


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_toml_block_parses_and_passes_its_reader(block: Block, tmp_path: Path) -> None:
    try:
        data = tomllib.loads(block.text)
    except tomllib.TOMLDecodeError as exc:
        pytest.fail(f"{block.id}: not valid TOML: {exc}", pytrace=False)
    kind = kind_of(block, data)
    try:
        if kind == "profile":
            reyn_core.host.Profile.from_toml_text(
                ELIDED_DIGEST.sub('"sha256:' + "0" * 64 + '"', block.text), source=block.id
            )
        elif kind == "lock":
            path = tmp_path / "reyn.lock"
            path.write_text(block.text, encoding="utf-8")
            read_lock(path)
        elif kind == "phase":
            path = tmp_path / "phase.toml"
            path.write_text(block.text, encoding="utf-8")
            read_phase_file(path)
        elif kind == "declaration":
            parse_declaration(block.text.encode(), block.id)
    except (reyn_core.ReynError, DeclarationError) as exc:
        pytest.fail(f"{block.id}: a {kind} block that its reader refuses: {exc}", pytrace=False)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("[plugins]\nenable = []\n", "profile"),
        ("# fragment\n[plugins]\nenable = 3\n", "fragment"),
        ("version = 1\n[plugins.x]\n", "lock"),
        ('name = "n"\ntask = "t"\n', "phase"),
        ("version = 1\n[permissions]\nnetwork = true\n", "declaration"),
        ('[project]\nname = "x"\n', "other"),
    ],
)
def test_blocks_are_classified(text: str, kind: str) -> None:
    block = Block("p.md", 1, text)
    assert kind_of(block, tomllib.loads(text)) == kind


def test_a_profile_typo_in_a_block_is_caught():
    with pytest.raises(reyn_core.ReynError, match="enabel"):
        reyn_core.host.Profile.from_toml_text('[plugins]\nenabel = ["file"]\n')
