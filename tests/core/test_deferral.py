"""Tool deferral: operator policy (names, plugins, clusters, budgets), the deterministic split, found
tools, the search tool as one of the registry's tools (a policy that defers without one is refused),
byte-stable renders, and specific errors for bad profile input.

The core ranks nothing: these tests stand in for the search pack's ``find_tools`` with a tool of the
same name (``SEARCH``); the pack's own tool is tested with deferral in tests/packs/search."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest

from reyn_core import ToolContext, ToolDefinition, ToolGates, ToolOrigin
from reyn_core.host import (
    DeferralPolicy,
    OperatorPolicy,
    PluginPolicy,
    Profile,
    ProfileError,
    RegistryBuilder,
    ToolDeferral,
    ToolRegistry,
    dispatch_tool,
    estimate_tokens,
    found_tool_names,
    render_router,
)
from reyn_core.jsondata import compact_json
from reyn_core.loading.step1_profile.profile_policy import deferral_policy

ROUTER = ToolContext(surface="router")
PARAMS = {"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": False}


def plugin(pid: str) -> ToolOrigin:
    return ToolOrigin(kind="plugin", plugin_id=pid, distribution=f"reyn-{pid}")


# name, cluster, plugin (None = host)
TOOLS: list[tuple[str, str, str | None]] = [
    ("ask_user", "chat", None),
    ("read_file", "file", "file"),
    ("write_file", "file", "file"),
    ("memory_get", "memory", "memory"),
    ("memory_put", "memory", "memory"),
    ("shell_run", "shell", "shell"),
    ("web_fetch", "web", "web"),
    ("web_search", "web", "web"),
]


# What the core needs of a search tool: a loaded tool of the policy's name (its handler is the pack's).
SEARCH = ToolDefinition(
    name="find_tools",
    description="Search for tools that are not in your tool list.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    handler=lambda query: {"tools": []},
    gates=ToolGates(router="allow", phase="deny"),
    cluster="tool_search",
    purity="read_only",
)


def build(
    order: list[tuple[str, str, str | None]] | None = None,
    *,
    operator: OperatorPolicy = OperatorPolicy(),
    calls: list[str] | None = None,
    search: bool = True,
) -> ToolRegistry:
    builder = RegistryBuilder(operator=operator)
    if search:
        builder.register(SEARCH, origin=plugin("search"))
    for name, cluster, pid in order or TOOLS:

        def handler(text: str = "", _name: str = name) -> str:
            if calls is not None:
                calls.append(_name)
            return _name

        builder.register(
            ToolDefinition(
                name=name,
                description=f"The {name.replace('_', ' ')} tool.",
                parameters=PARAMS,
                handler=handler,
                cluster=cluster,
            ),
            origin=plugin(pid) if pid else ToolOrigin(kind="host"),
        )
    return builder.freeze()


ORDER = ("file", "memory", "shell", "web")  # plugins.enable order


def split(policy: DeferralPolicy, found: tuple[str, ...] = (), registry: ToolRegistry | None = None) -> Any:
    return ToolDeferral(registry or build(), policy).split(ROUTER, found)


# --------------------------------------------------------------------------- deferral by policy


def test_inactive_policy_renders_exactly_what_render_router_renders() -> None:
    registry = build()
    turn = ToolDeferral(registry, DeferralPolicy()).split(ROUTER)
    assert compact_json(turn.tools) == compact_json(render_router(registry, ROUTER))
    # Nothing deferred: the search tool, when loaded, is one visible tool among the others.
    assert turn.deferred == () and "find_tools" in turn.rendered


def test_defer_by_tool_name() -> None:
    turn = split(DeferralPolicy(tools={"shell_run"}))
    assert turn.deferred == ("shell_run",) and dict(turn.reasons) == {"shell_run": "defer.tools"}
    assert "shell_run" not in turn.rendered and turn.rendered[-1] == "find_tools"


def test_defer_by_plugin() -> None:
    turn = split(DeferralPolicy(plugins={"web"}))
    assert turn.deferred == ("web_fetch", "web_search")
    assert set(turn.reasons.values()) == {"defer.plugins"}


def test_defer_by_cluster() -> None:
    turn = split(DeferralPolicy(clusters={"memory"}))
    assert turn.deferred == ("memory_get", "memory_put")
    assert set(turn.reasons.values()) == {"defer.clusters"}


def test_rendered_tools_come_by_name_then_the_search_tool() -> None:
    turn = split(DeferralPolicy(clusters={"web", "shell"}))
    assert turn.rendered == ("ask_user", "memory_get", "memory_put", "read_file", "write_file", "find_tools")
    assert [t["function"]["name"] for t in turn.tools] == list(turn.rendered)


def test_nothing_deferred_means_no_search_tool() -> None:
    turn = split(DeferralPolicy(max_tools=50))
    assert turn.deferred == () and "find_tools" not in turn.rendered and len(turn.rendered) == len(TOOLS)


def test_max_tools_defers_the_least_preferred_host_first_then_plugins_in_enable_order() -> None:
    turn = split(DeferralPolicy(max_tools=4, plugin_order=ORDER))
    # 3 tools + the search tool: ask_user (host), then plugin "file" tools by name.
    assert turn.rendered == ("ask_user", "read_file", "write_file", "find_tools")
    assert set(turn.deferred) == {"memory_get", "memory_put", "shell_run", "web_fetch", "web_search"}
    assert set(turn.reasons.values()) == {"max_tools"}


def test_prefer_entries_come_first_in_listed_order() -> None:
    policy = DeferralPolicy(max_tools=4, plugin_order=ORDER, prefer=("web_search", "shell", "memory"))
    turn = split(policy)
    assert set(turn.rendered) == {"web_search", "shell_run", "memory_get", "find_tools"}


def test_plugin_order_changes_preference() -> None:
    turn = split(DeferralPolicy(max_tools=3, plugin_order=("web", "file")))
    assert set(turn.rendered) == {"ask_user", "web_fetch", "find_tools"}


def test_max_tokens_keeps_the_array_within_budget() -> None:
    full = sum(estimate_tokens(t) for t in render_router(build(search=False), ROUTER))
    search = estimate_tokens(split(DeferralPolicy(max_tokens=1)).tools[0])
    for budget in (search + full // 8, search + full // 4, full - 1):
        turn = split(DeferralPolicy(max_tokens=budget, plugin_order=ORDER))
        assert turn.tokens <= budget and turn.tokens == sum(estimate_tokens(t) for t in turn.tools)
        assert turn.deferred and "find_tools" in turn.rendered
        assert set(turn.reasons.values()) == {"max_tokens"}
    assert split(DeferralPolicy(max_tokens=full)).deferred == ()


def test_a_budget_below_the_search_tool_still_offers_the_search_tool() -> None:
    turn = split(DeferralPolicy(max_tokens=1))
    assert turn.rendered == ("find_tools",) and len(turn.deferred) == len(TOOLS)


def test_a_custom_token_counter_is_used_for_the_budget() -> None:
    turn = ToolDeferral(build(), DeferralPolicy(max_tokens=3), token_counter=lambda entry: 1).split(ROUTER)
    assert len(turn.rendered) == 3 and turn.tokens == 3


# --------------------------------------------------------------------------- found tools


def test_found_tools_are_added_after_the_search_tool_in_found_order() -> None:
    policy = DeferralPolicy(clusters={"web", "shell"})
    turn = split(policy, found=("web_search", "shell_run"))
    assert turn.rendered[-3:] == ("find_tools", "web_search", "shell_run")
    assert turn.deferred == ("web_fetch",)


def test_found_tools_stay_within_the_budget_most_recent_first() -> None:
    policy = DeferralPolicy(max_tools=4, plugin_order=ORDER)
    turn = split(policy, found=("web_fetch", "web_search", "shell_run"))
    # Room for 3 besides the search tool: the three found ones, newest kept.
    assert set(turn.rendered) == {"web_fetch", "web_search", "shell_run", "find_tools"}
    turn = split(
        DeferralPolicy(max_tools=3, plugin_order=ORDER), found=("web_fetch", "web_search", "shell_run")
    )
    assert set(turn.rendered) == {"web_search", "shell_run", "find_tools"}


def test_a_found_tool_the_gates_hide_is_never_rendered() -> None:
    registry = build(
        operator=OperatorPolicy(plugins={"shell": PluginPolicy(exclude=frozenset({"shell_run"}))})
    )
    turn = ToolDeferral(registry, DeferralPolicy(clusters={"web"})).split(
        ROUTER, ("shell_run", "nope", "web_fetch")
    )
    assert "shell_run" not in turn.rendered and "shell_run" not in turn.deferred
    assert "nope" not in turn.rendered and "web_fetch" in turn.rendered


def test_found_tool_names_reads_search_results_and_calls_from_the_conversation() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "find_tools", "arguments": "{}"}},
                {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": json.dumps(
                {"status": "ok", "data": {"tools": [{"name": "web_fetch"}, {"name": "bad name"}]}}
            ),
        },
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": json.dumps({"status": "ok", "data": {"tools": [{"name": "x"}]}}),
        },
        {
            "role": "assistant",
            "tool_calls": [{"id": "c3", "function": {"name": "web_fetch", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c3", "content": "not json"},
    ]
    # read_file's result is not a search result, so "x" is not found; web_fetch moves to the end.
    assert found_tool_names(messages) == ("read_file", "web_fetch")


# --------------------------------------------------------------------------- determinism


def test_split_and_render_are_byte_stable_whatever_the_registration_order() -> None:
    policy = DeferralPolicy(max_tools=5, plugin_order=ORDER, prefer=("memory",), clusters={"shell"})
    shuffled = list(TOOLS)
    random.Random(7).shuffle(shuffled)
    a = ToolDeferral(build(), policy).split(ROUTER, ("web_fetch",))
    b = ToolDeferral(build(shuffled), policy).split(ROUTER, ("web_fetch",))
    assert compact_json(a.tools).encode() == compact_json(b.tools).encode()
    assert a.deferred == b.deferred and dict(a.reasons) == dict(b.reasons)
    again = ToolDeferral(build(), policy).split(ROUTER, ("web_fetch",))
    assert compact_json(again.tools) == compact_json(a.tools)


# --------------------------------------------------------------------------- the search tool


async def test_a_deferred_tool_called_by_name_is_dispatched_through_the_registry() -> None:
    calls: list[str] = []
    registry = build(calls=calls)
    deferral = ToolDeferral(registry, DeferralPolicy(tools={"shell_run"}))
    assert deferral.registry is registry  # the search tool is one of its tools
    envelope = await dispatch_tool(deferral.registry, "shell_run", {"text": "ls"}, ROUTER)
    assert envelope == {"status": "ok", "data": "shell_run"} and calls == ["shell_run"]


def test_a_policy_that_defers_without_its_search_tool_is_refused() -> None:
    with pytest.raises(ValueError, match="no tool 'find_tools' is loaded to find deferred tools") as info:
        ToolDeferral(build(search=False), DeferralPolicy(tools={"shell_run"}))
    assert 'plugins.enable = [..., "search"]' in str(info.value)
    with pytest.raises(ValueError, match="no tool 'lookup' is loaded"):
        ToolDeferral(build(), DeferralPolicy(tools={"shell_run"}, search_tool="lookup"))
    # Controls: the same policy with the search tool loaded; a policy deferring nothing needs none.
    assert split(DeferralPolicy(tools={"shell_run"})).rendered[-1] == "find_tools"
    assert ToolDeferral(build(search=False), DeferralPolicy()).split(ROUTER).deferred == ()


def test_the_search_tool_is_never_deferred_by_the_lists() -> None:
    turn = split(DeferralPolicy(tools={"find_tools", "shell_run"}, clusters={"tool_search"}))
    assert turn.deferred == ("shell_run",) and turn.rendered[-1] == "find_tools"


def test_a_search_tool_the_gates_hide_is_not_offered() -> None:
    hidden = build(operator=OperatorPolicy(router_exclude=frozenset({"find_tools"})))
    turn = ToolDeferral(hidden, DeferralPolicy(tools={"shell_run"})).split(ROUTER)
    assert "find_tools" not in turn.rendered and turn.deferred == ("shell_run",)
    assert "find_tools" in split(DeferralPolicy(tools={"shell_run"})).rendered  # control


# --------------------------------------------------------------------------- bad input


def profile(text: str) -> Profile:
    return Profile.from_toml_text('[plugins]\nenable = ["file", "web"]\n' + text, "reyn.toml")


@pytest.mark.parametrize(
    ("toml", "key", "words"),
    [
        ("max_tools = -1", "surfaces.router.defer.max_tools", "greater than or equal to 1"),
        ("max_tokens = 0", "surfaces.router.defer.max_tokens", "greater than or equal to 1"),
        ("max_tools = 2.5", "surfaces.router.defer.max_tools", "valid integer"),
        ("max_tools = true", "surfaces.router.defer.max_tools", "valid integer"),
        ("max_tools = '10'", "surfaces.router.defer.max_tools", "valid integer"),
        ('tools = "shell_run"', "surfaces.router.defer.tools", "valid list"),
        ("clusters = [1]", "surfaces.router.defer.clusters[0]", "valid string"),
        ('search_tool = "find tools"', "surfaces.router.defer.search_tool", "pattern"),
        ("max_tool = 3", "surfaces.router.defer.max_tool", "did you mean 'max_tools'"),
    ],
)
def test_bad_profile_values_name_the_key(toml: str, key: str, words: str) -> None:
    with pytest.raises(ProfileError) as info:
        profile("[surfaces.router.defer]\n" + toml)
    assert info.value.key == key and words in str(info.value) and "reyn.toml" in str(info.value)


@pytest.mark.parametrize(
    ("toml", "key", "words"),
    [
        ('tools = ["read_file", "shell_rnu"]', "surfaces.router.defer.tools[1]", "did you mean 'shell_run'"),
        ('plugins = ["shell"]', "surfaces.router.defer.plugins[0]", "no enabled plugin"),
        ('clusters = ["webb"]', "surfaces.router.defer.clusters[0]", "did you mean 'web'"),
        (
            'prefer = ["nothing"]',
            "surfaces.router.defer.prefer[0]",
            "no loaded tool, enabled plugin or cluster",
        ),
        (
            'clusters = ["web"]\nsearch_tool = "lookup"',
            "surfaces.router.defer.search_tool",
            "no tool 'lookup' is loaded to find deferred tools",
        ),
    ],
)
def test_names_that_match_nothing_loaded_are_errors(toml: str, key: str, words: str) -> None:
    prof = profile("[surfaces.router.defer]\n" + toml)
    with pytest.raises(ProfileError) as info:
        deferral_policy(prof, build())
    assert info.value.key == key and words in str(info.value)


def test_a_valid_profile_gives_the_policy() -> None:
    prof = profile(
        '[surfaces.router.defer]\nplugins = ["web"]\nmax_tools = 6\nprefer = ["memory", "read_file"]'
    )
    policy = deferral_policy(prof, build())
    assert policy == DeferralPolicy(
        plugins=frozenset({"web"}), max_tools=6, prefer=("memory", "read_file"), plugin_order=("file", "web")
    )
    assert policy.active and not deferral_policy(Profile()).active


def test_a_profile_that_defers_without_the_search_pack_is_one_clear_error() -> None:
    prof = profile('[surfaces.router.defer]\nplugins = ["web"]')
    with pytest.raises(ProfileError) as info:
        deferral_policy(prof, build(search=False))
    assert info.value.key == "surfaces.router.defer.search_tool" and "reyn.toml" in str(info.value)
    assert "enable the plugin that registers it (the search pack" in str(info.value)
    # Controls: the search tool loaded; nothing deferred needs no search tool.
    assert deferral_policy(prof, build()).plugins == {"web"}
    assert not deferral_policy(profile(""), build(search=False)).active


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"tools": "shell_run"}, TypeError, "not a string"),
        ({"prefer": "web"}, TypeError, "not a string"),
        ({"clusters": [1]}, TypeError, "must hold strings"),
        ({"max_tools": 0}, ValueError, "at least 1"),
        ({"max_tokens": -5}, ValueError, "at least 1"),
        ({"max_tools": True}, ValueError, "whole number"),
        ({"max_tokens": 2.0}, ValueError, "whole number"),
        ({"search_tool": "a b"}, ValueError, "valid tool name"),
    ],
)
def test_a_bad_policy_built_in_code_is_refused(
    kwargs: dict[str, Any], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        DeferralPolicy(**kwargs)


def test_the_search_tool_stays_once_everything_deferred_has_been_found() -> None:
    turn = split(DeferralPolicy(clusters={"web"}), found=("web_search", "web_fetch"))
    assert turn.deferred == () and turn.rendered[-3:] == ("find_tools", "web_search", "web_fetch")


# --------------------------------------------------------------------------- what stays between turns


def test_without_a_budget_each_turn_extends_the_previous_array() -> None:
    # Only lists defer: found tools are appended, so every earlier array is a prefix of the next one
    # (what providers' prompt caches key on).
    policy = DeferralPolicy(clusters={"web", "shell"})
    turns = [split(policy, found=f).rendered for f in ((), ("web_search",), ("web_search", "shell_run"))]
    for before, after in itertools.pairwise(turns):
        assert after[: len(before)] == before


def test_under_a_budget_a_found_tool_evicts_the_least_preferred_and_survivors_keep_their_order() -> None:
    policy = DeferralPolicy(max_tools=4, plugin_order=ORDER)
    first = split(policy).rendered
    later = split(policy, found=("web_search",)).rendered
    # The budget holds: web_search takes the place of the least-preferred kept tool, so the front
    # changes at that one entry; every tool kept in both turns is in the same relative order.
    assert len(first) == len(later) == 4
    evicted = [n for n in first if n not in later]
    # Preference: host tools, then plugins in enable order, then by name: write_file is the least.
    assert first == ("ask_user", "read_file", "write_file", "find_tools") and evicted == ["write_file"]
    assert [n for n in first if n in later] == [n for n in later if n in first]
    assert later[-1] == "web_search" and later[-2] == "find_tools"
