"""The search pack: BM25F ranking over name words, description and parameters, and — above all — a
gate matrix proving a search (``search_tools``, and the ``find_tools`` tool dispatched under deferral)
never returns a tool the caller could not be offered."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any

import pytest
from gate_axes import AVAILABLE, NAME, PLUGIN, ROLES, narrowed
from gate_axes import OPERATORS as GATE_OPERATORS
from reyn_tools_search.index import name_words, query_terms, search_tools, tool_index
from reyn_tools_search.tools import find_tools

from reyn_core import RouterCallerState, ToolContext, ToolDefinition, ToolGates, ToolOrigin
from reyn_core.host import (
    DeferralPolicy,
    OperatorPolicy,
    RegistryBuilder,
    ToolDeferral,
    ToolRegistry,
    dispatch_tool,
    gates,
)


def definition(name: str, description: str, **extra: Any) -> ToolDefinition:
    params = extra.pop(
        "parameters",
        {"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": False},
    )
    return ToolDefinition(
        name=name, description=description, parameters=params, handler=lambda **kw: kw, **extra
    )


def frozen(
    *tools: ToolDefinition, operator: OperatorPolicy = OperatorPolicy(), search: bool = False
) -> ToolRegistry:
    """A frozen registry of ``tools``; with ``search``, the pack's ``find_tools`` too, registered as
    the loader registers it (a tool of plugin ``search``)."""
    builder = RegistryBuilder(operator=operator)
    for t in tools:
        builder.register(t, origin=t.origin)
    if search:
        builder.register(find_tools, origin=ToolOrigin(kind="plugin", plugin_id="search"))
    return builder.freeze()


def serving(ctx: ToolContext, registry: ToolRegistry) -> ToolContext:
    """``ctx`` as a host serving ``registry`` passes it (``extras["registry"]``)."""
    return replace(ctx, extras={**ctx.extras, "registry": registry})


ROUTER = ToolContext(surface="router")


# --------------------------------------------------------------------------- ranking


def test_name_words_split_snake_kebab_dotted_and_camel_case() -> None:
    assert name_words("read_file") == "read file"
    assert name_words("getHTTPResponse_v2") == "get HTTP Response v2"
    assert name_words("math.factorial-fast") == "math factorial fast"


def test_query_terms_are_words_only_lower_cased_and_stemmed() -> None:
    assert query_terms('read "files" OR NEAR(x) * -y') == ("read", "file", "or", "near", "x", "y")
    assert query_terms("getUserOrders for resizing images") == (
        "get",
        "user",
        "order",
        "for",
        "resiz",
        "imag",
    )
    assert query_terms("   ...  ") == ()


def test_stop_words_and_bare_numbers_are_kept_unless_the_ranking_drops_them() -> None:
    from reyn_tools_search.ranking import Ranking

    query = "What is the area of a triangle with base 10?"
    assert "the" in query_terms(query) and "10" in query_terms(query)
    assert query_terms(query, Ranking(stop_words=True)) == ("area", "triangle", "base")


@pytest.mark.parametrize(
    ("tools", "query", "found"),
    [
        pytest.param(
            {"readFile": "Return a document's text.", "sendMail": "Deliver a message."},
            "read the file",
            ["readFile"],
            id="a camel-case name is found by its words",
        ),
        pytest.param(
            {"resize_images": "Resizes pictures.", "other": "nothing"},
            "resizing an image",
            ["resize_images"],
            id="stemming matches word forms",
        ),
        pytest.param(
            {
                "getUserOrders": "Return records.",
                "list_records": "Return the orders a shop has received, for any user.",
            },
            "get the orders of a user",
            ["getUserOrders", "list_records"],
            id="a name the request spells out wins over a description mention",
        ),
    ],
)
def test_a_query_finds_these_tools_in_this_order(tools: dict[str, str], query: str, found: list[str]) -> None:
    registry = frozen(*(definition(name, description) for name, description in tools.items()))
    assert [m.name for m in search_tools(registry, query, ROUTER)] == found


def test_parameter_names_and_descriptions_are_searched() -> None:
    params = {
        "type": "object",
        "properties": {"zipCode": {"type": "string", "description": "Postal code of the delivery address"}},
    }
    registry = frozen(
        definition("lookup", "Look something up.", parameters=params), definition("other", "x y")
    )
    [hit] = search_tools(registry, "postal zip", ROUTER)
    assert hit.name == "lookup"
    assert hit.matched["parameters"] == ("zip", "postal")


def test_name_match_outranks_a_description_mention() -> None:
    registry = frozen(
        definition("convert_currency", "Change an amount between two monies."),
        definition("weather", "Forecast; not for currency questions."),
    )
    hits = search_tools(registry, "currency", ROUTER)
    assert [h.name for h in hits] == ["convert_currency", "weather"]
    assert hits[0].matched == {"name": ("currency",)}


def test_results_are_deterministic_with_ties_broken_by_name() -> None:
    registry = frozen(*(definition(f"tool_{c}", "Does the same thing.") for c in "dcba"))
    first = [m.name for m in search_tools(registry, "same thing", ROUTER, limit=4)]
    assert first == ["tool_a", "tool_b", "tool_c", "tool_d"]
    assert [m.name for m in search_tools(registry, "same thing", ROUTER, limit=2)] == first[:2]


def test_a_query_without_words_finds_nothing() -> None:
    registry = frozen(definition("a_tool", "Something."))
    assert search_tools(registry, "?!", ROUTER) == []


def test_index_is_built_once_per_frozen_registry_and_visible_set() -> None:
    registry = frozen(definition("a_tool", "Something."), definition("b_tool", "Else."))
    assert tool_index(registry, {"a_tool"}) is tool_index(registry, {"a_tool"})
    assert tool_index(registry, {"a_tool"}) is not tool_index(registry, {"a_tool", "b_tool"})
    assert len(tool_index(registry, {"a_tool"})) == 1
    other = frozen(definition("a_tool", "Something."))
    assert tool_index(other, {"a_tool"}) is not tool_index(registry, {"a_tool"})  # per snapshot


async def test_find_tools_searches_the_registry_the_host_serves_and_says_so_when_none_is_given() -> None:
    registry = frozen(definition("a_tool", "Something."), search=True)
    missing = await dispatch_tool(registry, "find_tools", {"query": "something"}, ROUTER)
    assert missing["status"] == "error" and missing["error"]["kind"] == "runtime_missing"
    assert "extras={'registry': registry}" in missing["error"]["message"]
    # Control: the same call with the registry the host serves.
    found = await dispatch_tool(registry, "find_tools", {"query": "something"}, serving(ROUTER, registry))
    assert found["status"] == "ok" and [t["name"] for t in found["data"]["tools"]] == ["a_tool"]


def test_a_search_never_returns_a_search_tool() -> None:
    registry = frozen(definition("a_tool", "Search for tools."), search=True)
    assert {m.name for m in search_tools(registry, "search for tools", ROUTER)} == {"a_tool", "find_tools"}
    from reyn_tools_search.tools import _search_tool_names

    assert _search_tool_names(registry) == {"find_tools"}


def test_hidden_tools_cannot_change_the_ranking_of_visible_ones() -> None:
    """bm25 weighs a word by how rare it is among the indexed tools: were hidden tools indexed, a
    caller could learn that many hidden tools say "ledger" from how the visible ones are ordered."""
    visible = (
        definition("post_entry", "Post a ledger ledger ledger entry."),
        definition("send_bill", "Send an invoice to a customer."),
    )
    hidden = tuple(
        definition(f"hidden_{i}", "Ledger tooling for the ledger team.", gates=ToolGates(router="deny"))
        for i in range(40)
    )
    query = "ledger invoice"
    alone = [m.name for m in search_tools(frozen(*visible), query, ROUTER)]
    with_hidden = [m.name for m in search_tools(frozen(*visible, *hidden), query, ROUTER)]
    assert with_hidden == alone == ["post_entry", "send_bill"]
    # The case is not vacuous: an index over every tool would rank the visible ones the other way.
    from reyn_tools_search.index import ToolIndex

    everything = ToolIndex((*visible, *hidden))
    leaked = [m.name for m in everything.search(query, allowed={"post_entry", "send_bill"})]
    assert leaked == ["send_bill", "post_entry"]


def test_control_characters_in_descriptions_cannot_forge_matches() -> None:
    registry = frozen(definition("evil", "harmless \x02injected\x03 text"), definition("ok", "text"))
    hits = {h.name: h for h in search_tools(registry, "text", ROUTER)}
    assert hits["evil"].matched["description"] == ("text",)


# --------------------------------------------------------------------------- the gate matrix

# the core's gate matrix's axes, but for the decoy, which stays included
OPERATORS = {**GATE_OPERATORS, "included": narrowed(include=frozenset({NAME, "notes_read"}))}
CALLS: dict[str, dict[str, Any]] = {
    "none": {},
    "excluded": {"exclude": frozenset({NAME})},
    "other_excluded": {"exclude": frozenset({"notes_read"})},
    "step_without_it": {"allowed_tools": frozenset({"notes_read", "find_tools"})},
    "step_with_it": {"allowed_tools": frozenset({NAME, "notes_read", "find_tools"})},
    "agent_without_it": {"agent_tools": frozenset({"notes_read", "find_tools"})},
}
RUNTIME = {"handler": lambda text: text, "no_handler": None}


@dataclass(frozen=True)
class Case:
    role: str
    operator: str
    call: str
    available: str
    runtime: str

    def __str__(self) -> str:
        return "/".join((self.role, self.operator, self.call, self.available, self.runtime))


def expected_visible(case: Case) -> bool:
    """The router specification, written independently of gates.py."""
    if ROLES[case.role].router == "deny":
        return False
    if case.operator in (
        "plugins_off",
        "narrowed_to_phase",
        "tool_excluded",
        "not_included",
        "router_exclude",
    ):
        return False
    if case.runtime == "no_handler":
        return False
    if case.call in ("excluded", "step_without_it", "agent_without_it"):
        return False
    return case.available in ("unset", "true")


def registry_for(case: Case) -> ToolRegistry:
    origin = ToolOrigin(kind="plugin", plugin_id=PLUGIN, distribution="reyn-notes")
    target = ToolDefinition(
        name=NAME,
        description="Write a note to the notes folder.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        handler=RUNTIME[case.runtime],
        gates=ROLES[case.role],
        cluster="notes",
        available=AVAILABLE[case.available],
        origin=origin,
    )
    decoy = definition("notes_read", "Read a note from the notes folder.", cluster="notes", origin=origin)
    return frozen(target, decoy, operator=OPERATORS[case.operator], search=True)


def context_for(case: Case) -> ToolContext:
    call = dict(CALLS[case.call])
    agent_tools = call.pop("agent_tools", None)
    return ToolContext(
        surface="router", agent="a", router_state=RouterCallerState(**call), agent_tools=agent_tools
    )


ALL_CASES = [Case(*combo) for combo in itertools.product(ROLES, OPERATORS, CALLS, AVAILABLE, RUNTIME)]


def test_the_matrix_covers_every_layer() -> None:
    assert len(ALL_CASES) == 4 * 8 * 6 * 5 * 2
    layers = set()
    for case in ALL_CASES:
        registry = registry_for(case)
        layers.add(gates.check(registry.get(NAME), "router", context_for(case), registry=registry).layer)
    assert layers == {"", "role", "operator", "call", "runtime"}


def test_search_returns_a_tool_exactly_when_the_gates_would_offer_it() -> None:
    wrong = []
    for case in ALL_CASES:
        registry = registry_for(case)
        ctx = context_for(case)
        names = [m.name for m in search_tools(registry, "write notes note_write notes_write", ctx, limit=20)]
        offered = {t.name for t in registry.visible("router", ctx)}
        spec = expected_visible(case)
        gate = bool(gates.check(registry.get(NAME), "router", ctx, registry=registry))
        if (NAME in names) != spec or spec != gate or not set(names) <= offered:
            wrong.append(str(case))
    assert wrong == []


@pytest.mark.parametrize(
    "case", [c for c in ALL_CASES if c.available == "unset" or c.call == "none"], ids=str
)
async def test_the_search_tool_dispatched_never_reveals_a_refused_tool(case: Case) -> None:
    deferral = ToolDeferral(registry_for(case), DeferralPolicy(tools={"notes_read"}))
    ctx = serving(context_for(case), deferral.registry)
    envelope = await dispatch_tool(
        deferral.registry, "find_tools", {"query": "write a note", "limit": 20}, ctx
    )
    if case.operator == "plugins_off":  # find_tools is a plugin's tool: the operator turned it off too
        assert envelope["error"]["kind"] == "gate_refused" and NAME not in repr(envelope)
        return
    assert envelope["status"] == "ok", envelope
    names = [t["name"] for t in envelope["data"]["tools"]]
    assert (NAME in names) == expected_visible(case)
    assert "find_tools" not in names
    text = repr(envelope)
    if not expected_visible(case):
        assert NAME not in text  # not in a summary, a reason or a note either


async def test_the_search_tool_never_names_a_tool_the_host_excluded_for_the_call() -> None:
    """``dispatch_tool(..., exclude=)`` (``reyn mcp serve`` hides deferred tools from a client
    without elicitation this way): the call is refused and the search does not name it either."""
    registry = frozen(
        definition("read_file", "Read a text file from the workspace."),
        definition("read_csv", "Read a csv file into rows."),
        search=True,
    )
    ctx = serving(ROUTER, registry)

    async def found(**options: Any) -> list[str]:
        envelope = await dispatch_tool(
            registry, "find_tools", {"query": "read a file", "limit": 20}, ctx, **options
        )
        return [t["name"] for t in envelope["data"]["tools"]]

    assert await found() == ["read_file", "read_csv"]  # positive control: nothing excluded
    refused = await dispatch_tool(registry, "read_file", {}, ctx, exclude=("read_file",))
    assert refused["error"]["kind"] == "gate_refused"
    assert await found(exclude=("read_file",)) == ["read_csv"]


async def test_the_search_tool_is_refused_on_the_phase_surface() -> None:
    deferral = ToolDeferral(frozen(definition("a_tool", "x"), search=True), DeferralPolicy(tools={"a_tool"}))
    envelope = await dispatch_tool(
        deferral.registry,
        "find_tools",
        {"query": "x"},
        serving(ToolContext(surface="phase"), deferral.registry),
    )
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "gate_refused"


async def test_the_search_tool_validates_its_arguments_like_any_tool() -> None:
    deferral = ToolDeferral(frozen(definition("a_tool", "x"), search=True), DeferralPolicy(tools={"a_tool"}))
    ctx = serving(ROUTER, deferral.registry)
    for bad in ({"query": ""}, {"query": "x", "limit": 0}, {"query": "x", "limit": 21}, {"limit": 3}):
        envelope = await dispatch_tool(deferral.registry, "find_tools", bad, ctx)
        assert envelope["status"] == "error" and envelope["error"]["kind"] == "invalid_arguments", bad


# --------------------------------------------------------------------------- the visible set, cached


class Flag:
    """A switch an ``available`` check reads from outside the context (a configured directory...)."""

    def __init__(self) -> None:
        self.on = True
        self.asked = 0

    def __call__(self, ctx: ToolContext) -> bool:
        self.asked += 1
        return self.on


def test_each_input_of_the_gates_changes_what_a_warm_search_returns() -> None:
    """The visible set is kept per snapshot and call key; a key missing one input would serve one
    caller's set to another. With the cache warm, every input hides the target alone (the decoy, a
    positive control, stays), and the first context still finds it afterwards."""
    registry = frozen(
        definition(
            "ledger_post",
            "Post a ledger entry.",
            available=lambda ctx: ctx.agent != "intern" and not ctx.extras.get("read_only"),
        ),
        definition("ledger_read", "Read a ledger entry."),
    )
    base = ToolContext(surface="router", agent="clerk")

    def found(ctx: ToolContext, **kw: Any) -> set[str]:
        return {m.name for m in search_tools(registry, "ledger entry", ctx, limit=20, **kw)}

    both = {"ledger_post", "ledger_read"}
    assert found(base) == both
    variants: dict[str, tuple[ToolContext, dict[str, Any]]] = {
        "agent (read by available)": (ToolContext(surface="router", agent="intern"), {}),
        "extras (read by available)": (
            ToolContext(surface="router", agent="clerk", extras={"read_only": True}),
            {},
        ),
        "agent allowlist": (ToolContext(surface="router", agent="clerk", agent_tools={"ledger_read"}), {}),
        "step tool list": (
            ToolContext(
                surface="router", agent="clerk", router_state=RouterCallerState(allowed_tools={"ledger_read"})
            ),
            {},
        ),
        "loop exclusion": (
            ToolContext(
                surface="router", agent="clerk", router_state=RouterCallerState(exclude={"ledger_post"})
            ),
            {},
        ),
        "call exclusion": (base, {"exclude": {"ledger_post"}}),
    }
    for label, (ctx, kw) in variants.items():
        assert found(ctx, **kw) == {"ledger_read"}, label
        assert found(base) == both, label  # and the warm entry of the first context is untouched


def test_available_is_asked_on_every_search_not_kept() -> None:
    flag = Flag()
    registry = frozen(
        definition("ledger_post", "Post a ledger entry.", available=flag), definition("x", "ledger")
    )
    assert "ledger_post" in {m.name for m in search_tools(registry, "ledger", ROUTER)}
    flag.on = False  # same snapshot, same context: only the check's answer changed
    assert {m.name for m in search_tools(registry, "ledger", ROUTER)} == {"x"}
    flag.on = True
    assert "ledger_post" in {m.name for m in search_tools(registry, "ledger", ROUTER)}
    assert flag.asked == 3


def test_the_phase_surface_keys_on_allowed_ops() -> None:
    registry = frozen(definition("ledger_post", "Post."), definition("ledger_read", "Read."))
    phase = ToolContext(surface="phase")
    assert [t.name for t in registry.visible("phase", phase, allowed_ops=["ledger_post"])] == ["ledger_post"]
    assert [t.name for t in registry.visible("phase", phase, allowed_ops=["ledger_read"])] == ["ledger_read"]
    assert [t.name for t in registry.visible("phase", phase, allowed_ops=["ledger_*"])] == [
        "ledger_post",
        "ledger_read",
    ]


def test_visible_agrees_with_check_for_every_case_of_the_matrix_warm_and_cold() -> None:
    for case in ALL_CASES:
        registry = registry_for(case)
        ctx = context_for(case)
        for _ in range(2):  # cold, then from the snapshot's kept answer
            names = {t.name for t in registry.visible("router", ctx)}
            expected = {t.name for t in registry.tools() if gates.check(t, "router", ctx, registry=registry)}
            assert names == expected, str(case)


def test_what_a_snapshot_derives_is_bounded_per_kind() -> None:
    from reyn_tools_search.index import INDEXES_KEPT

    from reyn_core.registry.snapshot import DERIVED_ENTRIES

    registry = frozen(*(definition(f"tool_{i}", "Something.") for i in range(INDEXES_KEPT * 2)))
    index = tool_index(registry, {"tool_0"})
    for i in range(DERIVED_ENTRIES * 3):  # many callers: cheap entries never evict the costly index
        registry.visible("router", ToolContext(surface="router", agent=f"agent{i}"))
    assert len(registry._derived["visible"]) == DERIVED_ENTRIES
    assert tool_index(registry, {"tool_0"}) is index
    for i in range(INDEXES_KEPT * 2):
        tool_index(registry, {f"tool_{i}"})
    assert len(registry._derived["tool_search.index"]) == INDEXES_KEPT


# --------------------------------------------------------------------------- long queries


def test_a_long_query_is_cut_before_a_split_word_by_every_entry_point() -> None:
    from reyn_tools_search.index import MAX_QUERY_CHARS, cut_query

    head = "convert currency " + "x" * (MAX_QUERY_CHARS - 30) + " euros"
    query = head + "dollars " * 200
    cut = cut_query(query)
    assert len(cut) <= MAX_QUERY_CHARS and query.startswith(cut) and not cut.endswith("euro")
    assert cut_query("short") == "short"
    assert query_terms(query) == query_terms(cut)


async def test_find_tools_and_search_tools_cut_a_long_query_alike() -> None:
    registry = frozen(
        definition("convert_currency", "Convert money."), definition("read_file", "Read a file."), search=True
    )
    deferral = ToolDeferral(registry, DeferralPolicy(tools={"convert_currency"}))
    long_query = "convert currency please " + "and then some more words " * 100
    direct = [m.name for m in search_tools(registry, long_query, ROUTER, exclude={"find_tools"})]
    ctx = serving(ROUTER, deferral.registry)
    envelope = await dispatch_tool(deferral.registry, "find_tools", {"query": long_query}, ctx)
    assert envelope["status"] == "ok", envelope
    assert [t["name"] for t in envelope["data"]["tools"]] == direct == ["convert_currency"]


# --------------------------------------------------------------------------- the ranking engine


def test_words_in_many_tools_still_count() -> None:
    """A word in more than 1/16 of the tools is summed as a whole column: it must weigh the same."""
    filler = [definition(f"tool_{i:02d}", "Handles the common case.") for i in range(40)]
    registry = frozen(
        *filler,
        definition("common_rare", "Handles the rare common case."),
        definition("rare_only", "Handles the rare one."),
    )
    names = [m.name for m in search_tools(registry, "rare common", ROUTER, limit=3)]
    assert names[:2] == ["common_rare", "rare_only"]
    assert names[2].startswith("tool_")  # reached by the common word alone


def test_feedback_finds_a_tool_through_the_words_of_the_first_hits() -> None:
    from reyn_tools_search.index import ToolIndex
    from reyn_tools_search.ranking import Ranking

    tools = [
        definition("butter_scale", "Weigh butter: ounces, pounds."),
        definition("convert_weight", "Convert a weight between pounds and grams."),
        *(definition(f"other_{i}", f"Unrelated tool number {i} about paint.") for i in range(6)),
    ]
    plain = ToolIndex(tools, Ranking())
    assert [m.name for m in plain.search("butter ounces", limit=5)] == ["butter_scale"]
    feedback = ToolIndex(tools, Ranking(feedback_docs=1, feedback_terms=3, feedback_weight=0.5))
    assert [m.name for m in feedback.search("butter ounces", limit=5)] == ["butter_scale", "convert_weight"]


def test_enum_values_option_finds_a_tool_by_a_value_it_accepts() -> None:
    from reyn_tools_search.index import ToolIndex
    from reyn_tools_search.ranking import Ranking

    unit = {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "The unit."}
    schema = {"type": "object", "properties": {"unit": unit}}
    tools = [
        definition("read_sensor", "Read a sensor.", parameters=schema),
        definition("read_gauge", "Read a gauge."),
    ]
    assert ToolIndex(tools, Ranking()).search("fahrenheit") == []  # off by default: values unread
    hits = ToolIndex(tools, Ranking(enum_values=True)).search("reading in fahrenheit")
    assert [m.name for m in hits] == ["read_sensor"]
    assert hits[0].matched == {"parameters": ("fahrenheit",)}


def test_word_pairs_option_prefers_the_words_side_by_side() -> None:
    from reyn_tools_search.index import ToolIndex
    from reyn_tools_search.ranking import Ranking

    tools = [
        definition("weather_current_alerts", "Alerts: weather warnings, current ones."),
        definition("conditions", "Conditions in a city: the current weather, wind and rain, as observed."),
        definition("ping", "Check a host."),
    ]
    alone = ToolIndex(tools, Ranking()).search("current weather")
    assert [m.name for m in alone] == ["weather_current_alerts", "conditions"]  # both words, apart
    paired = ToolIndex(tools, Ranking(pairs=1.0)).search("current weather")
    assert [m.name for m in paired] == ["conditions", "weather_current_alerts"]


def test_identifier_splitting_is_what_finds_a_camel_case_name_by_its_words() -> None:
    from reyn_tools_search.index import ToolIndex
    from reyn_tools_search.ranking import Ranking

    tools = [definition("getUserOrders", "Return records."), definition("ping", "Check a host.")]
    assert [m.name for m in ToolIndex(tools, Ranking()).search("user orders")] == ["getUserOrders"]
    unsplit = ToolIndex(tools, Ranking(split_identifiers=False))
    assert unsplit.search("user orders") == []
    assert [m.name for m in unsplit.search("getuserorders")] == ["getUserOrders"]


def test_concurrent_searches_from_different_callers_each_get_their_own_set() -> None:
    """Threads searching one snapshot with different allowlists at once: every answer is the one
    for its own context (the kept visible sets and indexes never cross callers)."""
    import threading

    registry = frozen(*(definition(f"ledger_{i}", f"Ledger tool {i}.") for i in range(12)))
    allowlists = [frozenset({f"ledger_{i}", f"ledger_{(i + 1) % 12}"}) for i in range(12)]
    wrong: list[str] = []

    def caller(k: int) -> None:
        for j in range(40):
            allowed = allowlists[(k + j) % len(allowlists)]
            ctx = ToolContext(surface="router", agent=f"a{k}", agent_tools=allowed)
            names = {m.name for m in search_tools(registry, "ledger tool", ctx, limit=20)}
            if names != allowed:
                wrong.append(f"{sorted(names)} != {sorted(allowed)}")

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert wrong == []


def test_matched_words_leave_out_words_that_tell_nothing() -> None:
    registry = frozen(definition("weather_now", "The weather of a city."), definition("other", "x"))
    [hit] = search_tools(registry, "what is the weather of the city", ROUTER)
    assert hit.matched == {"name": ("weather",), "description": ("weather", "city")}


def test_indexes_of_one_snapshot_share_each_tools_analysis_but_not_its_statistics() -> None:
    """Each tool's words are split and counted once per snapshot; the word statistics are still
    those of each visible set: an index over every tool, built first, does not change the ranking a
    caller who sees two of them gets."""
    visible = (
        definition("post_entry", "Post a ledger ledger ledger entry."),
        definition("send_bill", "Send an invoice to a customer."),
    )
    others = tuple(definition(f"other_{i}", "Ledger tooling for the ledger team.") for i in range(40))
    registry = frozen(*visible, *others)
    every = {t.name for t in registry.tools()}
    pair = {"post_entry", "send_bill"}
    over_every = tool_index(registry, every).search("ledger invoice", allowed=pair)
    assert [m.name for m in over_every] == ["send_bill", "post_entry"]  # every tool's statistics
    two = tool_index(registry, pair)
    assert [m.name for m in two.search("ledger invoice")] == ["post_entry", "send_bill"]
    [analysed] = registry._derived["tool_search.analysis"].values()
    assert set(analysed) == every  # one analysis per tool, shared by both indexes


def test_the_surface_is_part_of_the_kept_answer() -> None:
    registry = frozen(
        definition("ledger_post", "Post.", gates=ToolGates(phase="deny")), definition("ledger_read", "Read.")
    )
    ctx = ToolContext(surface="router")
    ops = ["ledger_*"]
    assert [t.name for t in registry.visible("router", ctx)] == ["ledger_post", "ledger_read"]  # warm
    assert [t.name for t in registry.visible("phase", ctx, allowed_ops=ops)] == ["ledger_read"]
    assert registry.visible_names("mcp", ctx) == {"ledger_post", "ledger_read"}
    assert registry.visible_names("phase", ctx, allowed_ops=ops) == {"ledger_read"}
