"""``reyn approvals list / show / approve / deny`` as an operator runs them (real processes, real
store): JSON output, a denial's reason, and decisions that cannot be made refused with exit 1."""

from __future__ import annotations

CALL = ("path=out/a.md", "text=hi")


def _request(world) -> str:
    _, envelope = world.reyn_json("tools", "call", world.write, *CALL)
    return envelope["error"]["approval"]


def test_deny_with_a_reason_then_the_call_is_refused_with_it(world):
    approval = _request(world)
    code, record = world.reyn_json("approvals", "deny", approval, "--reason", "use out/drafts", "--by", "ana")
    assert code == 0 and record["status"] == "denied" and record["decided_by"] == "operator:ana"
    code, envelope = world.reyn_json("tools", "call", world.write, *CALL, "--approval", approval)
    assert code == 1 and "use out/drafts" in envelope["error"]["message"]
    assert not (world.root / "out").exists()


def test_list_shows_pending_only_unless_all(world):
    first = _request(world)
    world.reyn("approvals", "deny", first)
    second = _request(world)
    _, pending = world.reyn_json("approvals", "list")
    _, everything = world.reyn_json("approvals", "list", "--all")
    assert [r["id"] for r in pending] == [second]
    assert {r["id"] for r in everything} == {first, second}
    text = world.reyn("approvals", "list").stdout
    assert second in text and world.write in text


def test_a_request_cannot_be_decided_twice_or_when_unknown(world):
    approval = _request(world)
    assert world.reyn("approvals", "approve", approval).returncode == 0
    again = world.reyn("approvals", "deny", approval)
    assert again.returncode == 1 and "approved, not pending" in again.stderr
    unknown = world.reyn("approvals", "approve", "apr-nope")
    assert unknown.returncode == 1 and "no approval request" in unknown.stderr
    shown = world.reyn("approvals", "show", "apr-nope")
    assert shown.returncode == 1


def test_show_prints_the_exact_call_for_the_operator(world):
    approval = _request(world)
    text = world.reyn("approvals", "show", approval).stdout
    assert f"request {approval}: pending" in text
    assert '"mode": "append"' in text and '"path": "out/a.md"' in text  # defaults filled
    assert "[[approvals.rules]] #1" in text and "paths outside out/drafts" in text


def test_standing_and_for_session_together_are_refused_and_decide_nothing(world):
    approval = _request(world)
    both = world.reyn("approvals", "approve", approval, "--standing", "--for-session")
    assert both.returncode != 0 and "not allowed with argument" in both.stderr
    code, record = world.reyn_json("approvals", "show", approval)
    assert code == 0 and record["status"] == "pending"  # nothing was decided
    # positive control: one scope alone is accepted
    code, record = world.reyn_json("approvals", "approve", approval, "--standing")
    assert code == 0 and record["status"] == "approved" and record["scope"] == "standing"
