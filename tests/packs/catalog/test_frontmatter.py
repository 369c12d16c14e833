"""The strict front-matter parser: the YAML subset it reads, and a clear error for the rest."""

from __future__ import annotations

import pytest
from reyn_tools_catalog import FrontMatterError, parse_front_matter


def fm(*lines: str, body: str = "") -> str:
    return "\n".join(["---", *lines, "---"]) + "\n" + body


def test_plain_quoted_and_commented_values():
    parsed = parse_front_matter(
        fm(
            "# a comment",
            "name: summarize  # trailing comment",
            'title: "a \\"quoted\\" one"',
            "other: 'it''s'",
            "empty_list: []",
            body="Body\n",
        )
    )
    assert parsed.values == {
        "name": "summarize",
        "title": 'a "quoted" one',
        "other": "it's",
        "empty_list": [],
    }
    assert parsed.lines == {"name": 3, "title": 4, "other": 5, "empty_list": 6}
    assert parsed.body == "Body\n"


def test_a_comment_may_follow_a_closed_quoted_string_a_flow_list_or_a_plain_value():
    parsed = parse_front_matter(
        fm(
            'name: "x" # note',
            "other: 'it''s'\t# note",
            'hash: "a # b"  # real one',
            "plain: value\t# tab then comment",
            "sharp: C# stays",
            'tools: [a, "b]"]  # two',
            'json: ["a", "b"] # json list',
            "none: # nothing here",
            "items: # a list",
            "  - one # first",
            "  - 'two' # second",
        )
    )
    assert parsed.values == {
        "name": "x",
        "other": "it's",
        "hash": "a # b",
        "plain": "value",
        "sharp": "C# stays",
        "tools": ["a", "b]"],
        "json": ["a", "b"],
        "none": None,
        "items": ["one", "two"],
    }


def test_flow_and_block_lists():
    parsed = parse_front_matter(fm("a: [x, \"y z\", 'w']", "b:", "  - one", '  - "two"', "c:", "- three"))
    assert parsed.values == {"a": ["x", "y z", "w"], "b": ["one", "two"], "c": ["three"]}


def test_block_scalars_keep_or_fold_lines():
    parsed = parse_front_matter(fm("lit: |", "  line one", "  line two", "fold: >-", "  folded", "  text"))
    assert parsed.values == {"lit": "line one\nline two\n", "fold": "folded text"}


def test_a_json_object_may_span_lines():
    parsed = parse_front_matter(
        fm('input_schema: {"type": "object",', '  "properties": {"q": {"type": "string"}}}', "name: x")
    )
    assert parsed.values["input_schema"] == {"type": "object", "properties": {"q": {"type": "string"}}}
    assert parsed.values["name"] == "x"


def test_body_keeps_later_dashes_and_a_bom_is_ignored():
    parsed = parse_front_matter("\ufeff" + fm("name: x", body="a\n---\nb\n"))
    assert parsed.body == "a\n---\nb\n"


BAD = {
    "no opening line": ("name: x\n", 1, "must start with a front-matter block"),
    "never closed": ("---\nname: x\n", 2, "never closed"),
    "missing colon": (fm("name x"), 2, "expected 'key: value'"),
    "duplicate key": (fm("name: a", "name: b"), 3, "key 'name' appears twice (first on line 2)"),
    "nested mapping": (fm("meta:", "  author: me"), 3, "nested mapping"),
    "indented key": (fm("name: a", "  sub: b"), 3, "nested mappings are not supported"),
    "tab indentation": (fm("tools:", "\t- a"), 3, "tabs are not allowed"),
    "stray list item": (fm("- a"), 2, "a list item must follow a 'key:' line"),
    "bad json": (fm('input_schema: {"type": '), 2, "JSON value of 'input_schema' is malformed or not closed"),
    "bad double quote": (fm('name: "abc'), 2, "malformed double-quoted string"),
    "bad single quote": (fm("name: 'it's'"), 2, "malformed single-quoted string"),
    "anchor": (fm("name: &a x"), 2, "anchors, aliases, tags"),
    "alias": (fm("name: *a"), 2, "anchors, aliases, tags"),
    "tag": (fm("name: !!str x"), 2, "anchors, aliases, tags"),
    "unclosed flow list": (fm("tools: [a, b"), 2, "not closed by ']'"),
    "nested flow list": (fm("tools: [a, [b]]"), 2, "nested lists or mappings"),
    "empty flow item": (fm("tools: [a, , b]"), 2, "empty item"),
    "colon in plain value": (fm("description: note: this"), 2, "may not contain ': '; quote it"),
    "quoted non-string": (fm('name: "a" "b"'), 2, "malformed double-quoted string"),
    "text after a closing quote": (fm('name: "a"b'), 2, "only whitespace and a '# comment' may follow"),
    "comment without space": (fm('name: "a"# note'), 2, "only whitespace and a '# comment' may follow"),
    "text after a single quote": (fm("name: 'a' b"), 2, "malformed single-quoted string"),
    "text after a flow list": (fm("tools: [a, b] c"), 2, "not closed by ']'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_front_matter_names_the_line_and_the_fix(case):
    text, line, message = BAD[case]
    with pytest.raises(FrontMatterError) as info:
        parse_front_matter(text)
    assert info.value.line == line
    assert message in info.value.message
    assert str(info.value).startswith(f"line {line}: ")


def test_lines_end_at_newlines_only_not_at_unicode_separators():
    parsed = parse_front_matter(fm("description: a\u2028b\x85c", "name: x", body="body\u2028more\r\n"))
    assert parsed.values == {"description": "a\u2028b\x85c", "name": "x"}
    assert parsed.body == "body\u2028more\r\n"


def test_windows_line_endings_are_accepted():
    parsed = parse_front_matter("---\r\nname: x\r\ntools:\r\n  - a\r\n---\r\nBody\r\n")
    assert parsed.values == {"name": "x", "tools": ["a"]}
    assert parsed.body == "Body\r\n"


# A skill's front matter is text from outside (issue 24): each JSON value is bounded in JSON values
# before it is parsed (MAX_JSON_VALUES) and read with JSON's numbers only.
def _many(n: int) -> str:
    return "[" + ",".join(["0"] * (n - 1)) + "]"  # a list of n - 1 items: n JSON values


# each form a JSON value takes, and where its list is once parsed
FORMS = {
    "object": ('input_schema: {{"enum": {}}}', lambda values: values["input_schema"]["enum"]),
    "flow list": ("tools: {}", lambda values: values["tools"]),
    "block list item": ("tools:\n  - {}", lambda values: values["tools"][0]),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_json_value_within_the_value_bound_is_read(form: str) -> None:
    from reyn_tools_catalog.frontmatter import MAX_JSON_VALUES

    line, found = FORMS[form]
    parsed = parse_front_matter(fm(*line.format(_many(MAX_JSON_VALUES - 2)).split("\n")))
    assert found(parsed.values) == [0] * (MAX_JSON_VALUES - 3)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_json_value_over_the_value_bound_is_refused_unread(form: str) -> None:
    from reyn_tools_catalog.frontmatter import MAX_JSON_VALUES

    line, _ = FORMS[form]
    with pytest.raises(FrontMatterError) as info:
        parse_front_matter(fm(*line.format(_many(MAX_JSON_VALUES + 1)).split("\n")))
    assert f"more than {MAX_JSON_VALUES} JSON values" in info.value.message


@pytest.mark.parametrize(
    "line", ['input_schema: {"default": NaN}', 'input_schema: {"maximum": 1e400}', "tools:\n  - [Infinity]"]
)
def test_a_number_json_cannot_carry_is_refused(line: str) -> None:
    with pytest.raises(FrontMatterError) as info:
        parse_front_matter(fm(*line.split("\n")))
    assert "is not JSON" in info.value.message or "64-bit float" in info.value.message
