"""``python -m reyn_loops.testing.scripted_server SCRIPT``: the scripted model on its own, for offline
``reyn chat`` trials — a real server subprocess and a real ``reyn chat`` subprocess against it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reyn_loops.testing.scripted_server import load_script


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REYN_")}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return env


# The bound of one ``reyn chat`` run; the server outlives the two runs a test makes against it, so a
# slow machine (or a loaded one: the suite runs on several workers) ends a run by its own timeout,
# never by the server having stopped first.
CHAT_S = 300


def _scripted_server(script: Path) -> subprocess.Popen[str]:
    lifetime = str(2 * CHAT_S + 60)
    return subprocess.Popen(
        [sys.executable, "-m", "reyn_loops.testing.scripted_server", str(script), "--lifetime", lifetime],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def _chat(cwd: Path, base_url: str, text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reyn_core", "chat", "--model", "openai/scripted", "--api-base", base_url],
        input=text,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=_env(),
        timeout=CHAT_S,
    )


def test_a_script_file_serves_reyn_chat_offline(tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                {
                    "calls": [
                        {
                            "name": "convert_units",
                            "arguments": {"value": 2, "from_unit": "km", "to_unit": "m"},
                        }
                    ]
                },
                {"text": "2 km is 2000 m."},
            ]
        )
    )
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["loops", "example"]\n')
    server = _scripted_server(script)
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        assert first.startswith("serving 2 scripted replies at http://127.0.0.1:"), first
        base_url = first.rsplit(" ", 1)[1].strip()
        chat = _chat(tmp_path, base_url, "how many metres in 2 km?\n")
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert chat.returncode == 0, chat.stderr
    assert "convert_units" in chat.stdout
    assert "2 km is 2000 m." in chat.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"text": "hi"}', "must be a JSON array of replies, not dict"),
        ('[{"txt": "hi"}]', "[0]: a reply is an object with one of the keys"),
        ('[{"text": "a", "error": 500}]', "[0]: a reply is an object with one of the keys"),
        ('[{"text": 3}]', "[0].text: expected a string"),
        ('[{"error": 200}]', "[0].error: expected an HTTP error status from 400 to 599"),
        ('[{"calls": []}]', "[0].calls: expected a non-empty array"),
        ('[{"calls": [{"arguments": {}}]}]', "[0].calls[0]: expected {'name': str"),
        ('[{"text": "a", "extra": 1}]', "[0]: unknown key(s) ['extra']"),
        ("[not json", "cannot read the script"),
    ],
)
def test_a_bad_script_names_the_entry_and_what_is_allowed(tmp_path: Path, content: str, message: str):
    script = tmp_path / "s.json"
    script.write_text(content)
    with pytest.raises(ValueError) as info:
        load_script(script)
    assert message in str(info.value)


def test_the_command_exits_2_on_a_bad_script_without_serving(tmp_path: Path):
    script = tmp_path / "s.json"
    script.write_text('[{"txt": "hi"}]')
    proc = subprocess.run(
        [sys.executable, "-m", "reyn_loops.testing.scripted_server", str(script)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "s.json[0]: a reply is an object" in proc.stderr


def test_load_script_reads_all_three_kinds(tmp_path: Path):
    script = tmp_path / "s.json"
    script.write_text(
        '[{"text": "a"}, {"calls": [{"name": "t", "arguments": "{bad"}], "content": "c"},'
        ' {"error": 503, "message": "down"}]'
    )
    text, calls, error = load_script(script)
    assert text.content == "a"
    assert calls.tool_calls == (("t", "{bad"),) and calls.content == "c"
    assert (error.status, error.error_message) == (503, "down")


def test_an_approvals_store_that_fails_at_exit_is_one_clear_line_not_a_traceback(tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "first."}, {"text": "second."}]))
    (tmp_path / "reyn.toml").write_text(
        '[plugins]\nenable = ["loops", "example"]\n[approvals]\nsettings.file = "approvals.sqlite"\n'
        '[[approvals.rules]]\nplugins = ["example"]\napprovers = ["user"]\n'
    )
    server = _scripted_server(script)
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().rsplit(" ", 1)[1].strip()
        healthy = _chat(
            tmp_path, base_url, "hello\n"
        )  # control: the store works, the session's approvals end quietly
        (tmp_path / "approvals.sqlite").write_bytes(b"not a database, " * 8)  # the store breaks
        for stale in ("approvals.sqlite-wal", "approvals.sqlite-shm"):
            (tmp_path / stale).unlink(missing_ok=True)
        broken = _chat(tmp_path, base_url, "hello\n")
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert healthy.returncode == 0, healthy.stderr
    assert "first." in healthy.stdout and "could not end" not in healthy.stderr
    assert broken.returncode == 0, broken.stderr
    assert "second." in broken.stdout
    assert (
        "reyn: could not end this session's approvals (DatabaseError: file is not a database)"
        in broken.stderr
    )
    assert "Traceback" not in broken.stderr
