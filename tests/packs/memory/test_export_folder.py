"""``reyn memory export DIR`` makes DIR exactly the store: an older export there is replaced, not
merged into (a forgotten entry cannot come back through it), and a folder holding anything an export
did not write is refused with nothing written or deleted — on every backend, on real folders."""

from __future__ import annotations

import os
import stat

from reyn_tools_memory.cli import memory_command


def put(store, slug: str) -> None:
    store.put("shared", "", slug, name=slug.title(), description="d", type="project", body=f"{slug}\n")


def slugs(target) -> list[str]:
    return sorted(e.slug for e in target.store.all_entries())


def test_exporting_over_an_older_export_leaves_out_what_was_forgotten(
    target, target_factory, tmp_path, capsys
):
    put(target.store, "alpha")
    put(target.store, "beta")
    out = tmp_path / "export"
    assert memory_command([*target.cli, "export", str(out)], None) == 0
    assert target.store.delete("shared", "", "alpha")
    assert memory_command([*target.cli, "export", str(out)], None) == 0
    captured = capsys.readouterr()
    assert "exported 1 entries" in captured.out
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == ["shared", "shared/beta.md"]
    fresh = target_factory()
    assert memory_command([*fresh.cli, "import", str(out)], None) == 0
    assert slugs(fresh) == ["beta"]  # the forgotten memory stays forgotten
    # ... and its old file is not deleted (an export cannot tell it from a note written by hand):
    # kept beside the folder, named on stderr; the file written again byte for byte is gone from there.
    (kept,) = [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert sorted(p.relative_to(kept).as_posix() for p in kept.rglob("*.md")) == ["shared/alpha.md"]
    assert f"were kept in {kept}" in captured.err


def test_a_note_written_by_hand_in_the_export_form_is_kept_not_deleted(target, tmp_path, capsys):
    put(target.store, "alpha")
    out = tmp_path / "export"
    assert memory_command([*target.cli, "export", str(out)], None) == 0
    note = out / "shared" / "my-new-note.md"
    note.write_text('---\nslug: "my-new-note"\nname: Mine\n---\nwritten by hand\n')
    assert memory_command([*target.cli, "export", str(out)], None) == 0  # control: the export runs
    assert not note.exists() and (out / "shared" / "alpha.md").exists()
    (kept,) = [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert (kept / "shared" / "my-new-note.md").read_text().endswith("written by hand\n")
    assert str(kept) in capsys.readouterr().err


def test_a_folder_holding_other_files_is_refused_and_left_as_it_was(target, tmp_path, capsys):
    put(target.store, "alpha")
    out = tmp_path / "notes"
    (out / "shared").mkdir(parents=True)
    mine = {"todo.txt": "mine", "shared/readme.md": "# my own notes\n"}  # an .md no export wrote
    for rel, text in mine.items():
        (out / rel).write_text(text)
    for rel in mine:
        assert memory_command([*target.cli, "export", str(out)], None) == 2
        assert f"{rel} was not written by `reyn memory export`" in capsys.readouterr().err
        assert {p.relative_to(out).as_posix() for p in out.rglob("*.*")} == set(mine)  # nothing written
        assert all((out / r).read_text() == t for r, t in mine.items())  # nor deleted
        mine = {r: t for r, t in mine.items() if r != rel}
        (out / rel).unlink()  # positive control: once only export files are left, the export runs
    assert memory_command([*target.cli, "export", str(out)], None) == 0
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.md")) == ["shared/alpha.md"]


def test_an_export_through_a_linked_folder_keeps_the_link_and_the_folder_mode(target, tmp_path):
    put(target.store, "alpha")
    real = tmp_path / "real"
    real.mkdir()
    real.chmod(0o750)
    link = tmp_path / "link"
    link.symlink_to(real)
    assert memory_command([*target.cli, "export", str(link)], None) == 0
    assert memory_command([*target.cli, "export", str(link)], None) == 0  # over its own export
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert stat.S_IMODE(real.stat().st_mode) == 0o750
    assert (real / "shared" / "alpha.md").is_file()
