"""The secret mark on the host's files (``reyn_core.SecretFile``) and the one read rule
(``reyn_core.secret_paths``): the mark survives a host's own ``host_files`` and the trip to an
isolated worker; a path is refused at, below and through a link to a secret, and only there."""

from __future__ import annotations

import os
from pathlib import Path

from reyn_core import SecretFile, ToolContext, secret_paths

NEVER = "which no tool reads for a model"


def test_a_host_cannot_unmark_a_secret_by_naming_it_plainly() -> None:
    ctx = ToolContext(host_files={"/h/key": "the host's argument key"})
    merged = ctx.with_host_files({"/h/key": SecretFile("the host's argument key")})
    assert isinstance(merged.host_files["/h/key"], SecretFile)
    # positive control: the same marked list again is the same context
    assert merged.with_host_files({"/h/key": SecretFile("the host's argument key")}) is merged


def test_the_registry_cannot_unmark_a_hosts_secret_by_naming_it_plainly() -> None:
    """The other way round (secrets review F3): the host marks a path its registry names plainly
    (the dispatcher merges the registry's list in, its words winning): secret if either side marks."""
    ctx = ToolContext(host_files={"/h/key": SecretFile("the host's key"), "/h/notes": "plain"})
    merged = ctx.with_host_files({"/h/key": "the host's key", "/h/reyn.toml": "profile"})
    assert isinstance(merged.host_files["/h/key"], SecretFile)
    assert secret_paths(merged.host_files).refusal("/h/key", "key") is not None
    # positive controls: a plain path stays plain, what the registry adds is added, and nothing new
    # (the registry naming the secret plainly again) is the same context
    assert not isinstance(merged.host_files["/h/notes"], SecretFile) and "/h/reyn.toml" in merged.host_files
    assert merged.with_host_files({"/h/key": "the host's key"}) is merged


def test_the_mark_is_one_predicate_the_wire_reads_too() -> None:
    """``reyn_core.host.is_secret`` is the mark's one test: the worker's wire uses it, not the type
    (a value whose ``secret`` is True, as ``reyn_sandbox`` reads it, crosses marked)."""
    from reyn_core.host import is_secret
    from reyn_isolation.wire import context_from_data, context_to_data

    class Marked(str):
        secret = True

    ctx = ToolContext(
        host_files={"/h/key": Marked("a key"), "/h/truthy": type("T", (str,), {"secret": 1})("x")}
    )
    back = context_from_data(context_to_data(ctx), None).host_files
    assert is_secret(back["/h/key"]) and not is_secret(back["/h/truthy"])  # True itself, not truthy


def test_the_mark_crosses_to_an_isolated_worker() -> None:
    from reyn_isolation.wire import context_from_data, context_to_data

    ctx = ToolContext(host_files={"/h/key": SecretFile("the host's argument key"), "/h/reyn.toml": "profile"})
    back = context_from_data(context_to_data(ctx), None).host_files
    assert isinstance(back["/h/key"], SecretFile) and not isinstance(back["/h/reyn.toml"], SecretFile)
    assert back == ctx.host_files


def test_the_read_rule(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "logs", target_is_directory=True)
    rule = secret_paths({str(tmp_path / "logs"): SecretFile("a log folder"), "/h/reyn.toml": "profile"})
    for path in ("logs", "logs/remote.log", "link/remote.log", "LOGS/remote.log"):
        refusal = rule.refusal(os.path.join(tmp_path, path), path)
        assert refusal == f"{path!r} is one of the host's secret files (or lies inside one), {NEVER}"
    # positive controls: beside it, a name that only starts alike, a plain host file
    for path in ("notes.txt", "logs2/x", "/h/reyn.toml"):
        assert rule.refusal(os.path.join(tmp_path, path), path) is None
    assert not secret_paths({"/h/reyn.toml": "profile"})
