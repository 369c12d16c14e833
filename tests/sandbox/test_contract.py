"""The launcher's contract: exit statuses, fail-closed refusals, the grants form, the public names."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import reyn_sandbox
from reyn_sandbox import PRETEND_ENV, Grants, GrantsError, SandboxUnavailable

from .conftest import TIMEOUT, Sandbox


def test_the_public_names_are_pinned() -> None:
    pinned = """
        GRANT_KEYS LIMIT_KEYS LIMIT_MINIMUMS OPT_OUT PATH_KEYS PRETEND_ENV SETUP_FAILED_EXIT GrantKeys
        Grants GrantsError SandboxStatus SandboxUnavailable StopPipe caller_pipe check_grant describe_grants
        grant_entry_problem
        forbid_exec forbid_processes forbid_unix_sockets launcher_argv limit_exceeded limit_overrides
        limit_problem path_within protected_problem resolve_grants secret_hides status unavailable_reason
        write_root_clashes
    """.split()
    assert sorted(reyn_sandbox.__all__) == sorted(pinned)


_FORBID = (
    "import subprocess, sys\n"
    "sys.path.insert(0, {parent!r})\n"
    "print(subprocess.run(['/bin/sh', '-c', 'echo before'], capture_output=True, text=True).stdout.strip())\n"
    "from reyn_sandbox import forbid_exec\n"
    "forbid_exec()\n"
    "try:\n"
    "    subprocess.run(['/bin/sh', '-c', 'echo after'])\n"
    "except OSError as exc:\n"
    "    print('refused', exc.errno)\n"
)


def test_forbid_exec_stops_every_later_program_inside_the_sandbox(sandbox: Sandbox) -> None:
    parent = str(Path(reyn_sandbox.__file__).resolve().parent.parent)
    code = _FORBID.format(parent=parent)
    result = sandbox.run([sandbox.python, "-I", "-c", code], Grants(read_roots=(parent,)))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["before", "refused 1"]  # EPERM, after a program ran before


def test_the_exit_status_is_the_commands(sandbox: Sandbox) -> None:
    result = sandbox.run(["sh", "-c", "echo out; echo err >&2; exit 7"], Grants())

    assert result.returncode == 7
    assert (result.stdout, result.stderr) == ("out\n", "err\n")


def test_a_command_killed_by_a_signal_exits_128_plus_the_signal(sandbox: Sandbox) -> None:
    result = sandbox.run(["sh", "-c", "kill -TERM $$"], Grants())

    assert result.returncode == 128 + signal.SIGTERM
    assert result.stderr == ""


def test_a_missing_program_exits_127_with_one_line(sandbox: Sandbox) -> None:
    result = sandbox.run(["no-such-program-anywhere"], Grants())

    assert result.returncode == 127
    assert result.stderr == "reyn-sandbox: cannot run no-such-program-anywhere: No such file or directory\n"


def test_the_environment_passes_through_with_only_tmpdir_set(sandbox: Sandbox) -> None:
    result = sandbox.run(["env"], Grants(), env={"REYN_PASSED": "yes"})

    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == ["PATH=/usr/bin:/bin", "REYN_PASSED=yes", "TMPDIR=/tmp"]


@pytest.mark.parametrize("missing", ["landlock", "userns"])
def test_without_kernel_support_the_launcher_exits_125_and_never_runs_the_command(
    sandbox: Sandbox, area: Path, missing: str
) -> None:
    marker = area / "write" / "ran"
    grants = Grants(write_roots=(str(area / "write"),))
    argv = sandbox.argv(["touch", str(marker)], grants)

    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/",
                            env={"PATH": "/usr/bin:/bin", PRETEND_ENV: missing})  # fmt: skip

    assert result.returncode == 125
    assert result.stderr.startswith("reyn-sandbox: cannot confine commands here: ")
    assert len(result.stderr.splitlines()) == 1
    assert not marker.exists()


def test_without_kernel_support_status_says_why_and_launcher_argv_refuses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(PRETEND_ENV, "landlock")

    current = reyn_sandbox.status()

    assert current.available is False and current.landlock_abi is None and current.enforced == ()
    assert current.reason is not None and PRETEND_ENV in current.reason
    with pytest.raises(SandboxUnavailable, match="cannot confine commands here: Landlock treated as missing"):
        reyn_sandbox.launcher_argv(["true"], Grants())


def test_the_pretend_variable_cannot_add_capability(monkeypatch: pytest.MonkeyPatch) -> None:
    before = reyn_sandbox.status()
    monkeypatch.setenv(PRETEND_ENV, "nothing,available,abi=99")

    assert reyn_sandbox.status() == before


def test_status_names_what_is_enforced_here() -> None:
    current = reyn_sandbox.status()
    if not current.available:
        pytest.skip(f"no kernel sandbox here: {current.reason}")

    assert current.reason is None and current.landlock_abi is not None
    for name in ("landlock-fs", "mount-namespace", "pid-namespace", "no-network", "no-new-privs", "rlimits"):
        assert name in current.enforced
    assert ("scopes" in current.enforced) == (current.landlock_abi >= 6)


def test_malformed_grants_on_the_command_line_exit_125(sandbox: Sandbox) -> None:
    argv = sandbox.argv(["true"], Grants())
    argv[argv.index("--grants") + 1] = '{"read_roots": ["relative/path"]}'

    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/")

    assert result.returncode == 125
    assert result.stderr == "reyn-sandbox: Grants.read_roots: 'relative/path' is not an absolute path\n"


def test_grants_that_are_not_json_exit_125_saying_where(sandbox: Sandbox) -> None:
    argv = sandbox.argv(["true"], Grants())
    at = argv.index("--grants") + 1
    argv[at] += " trailing"

    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/")

    assert result.returncode == 125
    end = len(argv[at]) - len("trailing")
    assert result.stderr == f"reyn-sandbox: grants are not valid JSON: extra data at char {end}\n"


@pytest.mark.parametrize("text", ['{"cpu_seconds": 1,}', '{"cpu_seconds" 1}', '{"cpu_seconds": "x'])
def test_grants_broken_inside_the_json_exit_125_with_jsons_message(sandbox: Sandbox, text: str) -> None:
    """The launcher does not import json; its scanner raises json's error only once json is, so an
    error inside the text (not only after it) is where the launch must still say what and where.
    Positive control: the same launch with the grants intact runs the command."""
    argv = sandbox.argv(["true"], Grants())
    assert subprocess.run(argv, capture_output=True, timeout=TIMEOUT, cwd="/").returncode == 0
    argv[argv.index("--grants") + 1] = text

    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/")

    with pytest.raises(json.JSONDecodeError) as said:  # what json says of the same text
        json.loads(text)
    assert (result.returncode, result.stderr) == (
        125,
        f"reyn-sandbox: grants are not valid JSON: {said.value}\n",
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"read_roots": "/one/path"}, "Grants.read_roots must be a tuple of absolute paths"),
        ({"write_roots": ("relative",)}, "Grants.write_roots: 'relative' is not an absolute path"),
        ({"network": "yes"}, "Grants.network must be true or false"),
        ({"cpu_seconds": 0}, "Grants.cpu_seconds must be a positive integer"),
        ({"memory_bytes": True}, "Grants.memory_bytes must be a positive integer"),
        ({"uid": 0}, "Grants.uid must be a non-zero"),
    ],
)
def test_invalid_grants_are_refused_naming_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(GrantsError, match=message):
        Grants(**kwargs)  # type: ignore[arg-type]


def test_grants_round_trip_through_json_and_refuse_unknown_fields() -> None:
    grants = Grants(read_roots=("/a",), write_roots=("/b",), network=True, hide=("/a/.env",), cpu_seconds=5)

    assert Grants.from_json(grants.to_json()) == grants
    with pytest.raises(GrantsError, match=r"unknown grant fields \['writable_dirs'\]"):
        Grants.from_json('{"writable_dirs": ["/b"]}')


def test_grants_with_any_path_round_trip_through_json() -> None:
    """What json.dumps writes, the launcher's reader reads back: quotes, backslashes, control
    characters, a newline, non-ASCII and undecodable bytes (surrogate-escaped) in a path."""
    paths = ('/a "quoted" \\ back', "/tab\tnew\nline\x01", "/été/日本", "/bad-\udcff-byte", "/" + "x" * 4000)
    grants = Grants(read_roots=paths, identities=((paths[0], 2**63, 2**64 + 1, True),), memory_bytes=2**40)

    assert Grants.from_json(grants.to_json()) == grants


JSON_TEXTS = [
    '{"a":1}',
    ' \n{"a": [1, 2.5, "x", null, true]}\t\r ',
    '{"a":1} x',
    '{"a":1}{}',
    "",
    "   ",
    '{"a":}',
    "[1,2",
    '"\\ud800"',
    "NaN",
    "-Infinity",
    '{"a":"\x01"}',
    "\ufeff{}",
    "1e400",
    "-0",
    '{"a":1,}',
    "{'a':1}",
    '{"a":01}',
    '{"a":"\\x"}',
    '{"a":1,"a":2}',
    "[" * 50 + "]" * 50,
    "\x00",
    '{"a":1}\x00',
]


@pytest.mark.parametrize("text", JSON_TEXTS)
def test_the_grants_reader_answers_as_json_loads(text: str) -> None:
    """The launcher reads grants with json's own scanner, without importing json (which imports re):
    on each text it accepts exactly what json.loads accepts, with the same value, and refuses the
    rest as not valid JSON, saying where."""
    import math

    from reyn_sandbox._grants import _json_value

    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(GrantsError, match=r"^grants are not valid JSON: .*char \d+"):
            _json_value(text)
    else:
        found = _json_value(text)
        assert found == expected or (math.isnan(found) and math.isnan(expected))


def test_without_jsons_c_scanner_the_reader_is_json_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a Python without ``_json`` the one reader is json.loads itself: the same answers."""
    from reyn_sandbox._grants import _json_value

    monkeypatch.setitem(sys.modules, "_json", None)  # importing it now raises ImportError
    assert _json_value(' {"a": [1, "x"]} ') == {"a": [1, "x"]}
    with pytest.raises(GrantsError, match=r"^grants are not valid JSON: Extra data: .*\(char 8\)"):
        _json_value('{"a":1} x')


def test_grants_that_are_not_json_text_are_refused_clearly() -> None:
    from reyn_sandbox._grants import _json_value

    with pytest.raises(GrantsError, match="grants are not valid JSON: nested too deeply"):
        _json_value("[" * 100_000)
    with pytest.raises(GrantsError, match="grants must be JSON text, got bytes"):
        _json_value(b"{}")
    with pytest.raises(GrantsError, match="grants must be a JSON object"):
        Grants.from_json('["/a"]')


def test_an_empty_command_is_refused() -> None:
    with pytest.raises(GrantsError, match="command must be a non-empty sequence of strings"):
        reyn_sandbox.launcher_argv([], Grants())


def test_the_launcher_runs_with_an_isolated_interpreter() -> None:
    argv = reyn_sandbox.launcher_argv(["true"], Grants())

    assert argv[:3] == [sys.executable, "-I", "-S"]
    assert argv[-2:] == ["--", "true"]


def test_limit_exceeded_reads_the_last_stderr_line_only() -> None:
    report = "Traceback ...\nMemoryError\nreyn-sandbox: limit exceeded: memory_bytes (268435456)\n"

    assert reyn_sandbox.limit_exceeded(report) == "memory_bytes (268435456)"
    assert (
        reyn_sandbox.limit_exceeded("reyn-sandbox: limit exceeded: cpu_seconds (1)\nlater output\n") is None
    )
    assert reyn_sandbox.limit_exceeded("") is None


def test_a_failing_command_under_a_small_memory_limit_is_not_reported_as_memory(sandbox: Sandbox) -> None:
    # The supervisor's own (Python) address space would exceed 90% of 32 MiB: it must not count.
    result = sandbox.run(["sh", "-c", "sleep 0.2; exit 3"], Grants(memory_bytes=32 * 1024 * 1024))

    assert result.returncode == 3
    assert reyn_sandbox.limit_exceeded(result.stderr) is None
