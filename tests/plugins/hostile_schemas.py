"""Hostile JSON Schemas, written once: references a validator would retrieve (http, https, file, a
relative one against a remote ``$id``) and keywords that could make it do so, each with what its
refusal must name. A test serves ``url`` from a recording server on 127.0.0.1 and checks that nothing
was requested."""

from __future__ import annotations

from typing import Any


def obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An object schema with ``properties`` and any ``extra`` keywords."""
    return {"type": "object", "properties": properties, **extra}


def hostile_references(url: str) -> dict[str, tuple[dict[str, Any], str]]:
    """name -> (a schema with a reference that would be retrieved, or a keyword that could make one
    be, and what the refusal must name). The attack corpus every schema consumer is tried with (the
    core's factory and registration, the catalog pack's skills)."""
    return {
        "http $ref": (obj({"a": {"$ref": f"{url}/int.json"}}), f"{url}/int.json"),
        "https $ref": (obj({"a": {"$ref": "https://127.0.0.1:1/int.json"}}), "https://127.0.0.1:1/int.json"),
        "file $ref": (obj({"a": {"$ref": "file:///etc/passwd"}}), "file:///etc/passwd"),
        "root $ref": ({**obj({}), "$ref": f"{url}/root.json"}, f"{url}/root.json"),
        "$ref in $defs": (
            obj({"a": {"$ref": "#/$defs/b"}}, **{"$defs": {"b": {"$ref": f"{url}/b.json"}}}),
            f"{url}/b.json",
        ),
        "$dynamicRef": (obj({"a": {"$dynamicRef": f"{url}/x.json#meta"}}), "$dynamicRef"),
        "local $dynamicRef": (obj({"a": {"$dynamicRef": "#meta"}}), "$dynamicRef"),
        "$recursiveRef": (obj({"a": {"$recursiveRef": f"{url}/x.json"}}), "$recursiveRef"),
        "$schema http": ({**obj({"a": {}}), "$schema": f"{url}/meta.json"}, f"{url}/meta.json"),
        "$schema file": ({**obj({"a": {}}), "$schema": "file:///tmp/meta.json"}, "file:///tmp/meta.json"),
        "nested $schema": (
            obj({"a": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}),
            "$schema",
        ),
        "$id + relative $ref": ({**obj({"a": {"$ref": "int.json"}}), "$id": f"{url}/base/"}, "'int.json'"),
        "embedded $id": (obj({"a": {"$id": f"{url}/sub.json", "$ref": "#"}}), "embedded $id"),
        "anchor $ref": (obj({"a": {"$ref": "#x"}, "b": {"$anchor": "x"}}), "anchor"),
        "local $recursiveRef": (obj({"a": {"$recursiveRef": "#"}}), "$recursiveRef"),
        "embedded $id alone": (obj({"a": {"$id": f"{url}/alone.json"}}), "embedded $id"),
    }
