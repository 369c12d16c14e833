"""``reyn_core.lazy_exports``: a package's names imported from their module on first access, declared
name → module or module → names."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from reyn_core.lazy_exports import lazy_exports


def _exports(exports: dict[str, Any]) -> tuple[dict[str, Any], Any, Any]:
    namespace: dict[str, Any] = {}
    getattr_, dir_ = lazy_exports("reyn_core.validation", exports, namespace)
    return namespace, getattr_, dir_


def test_a_name_mapped_to_its_module_is_that_module_attribute():
    namespace, getattr_, _ = _exports({"canonical_json": "reyn_core.jsondata"})
    from reyn_core.jsondata import canonical_json

    assert getattr_("canonical_json") is canonical_json
    assert namespace == {"canonical_json": canonical_json}


def test_module_colon_attr_exports_the_attribute_under_another_name():
    _, getattr_, _ = _exports({"to_json": "json:dumps"})
    import json

    assert getattr_("to_json") is json.dumps


def test_a_module_mapped_to_names_exports_each_of_them():
    _, getattr_, dir_ = _exports({"reyn_core.jsondata": ("canonical_json", "depth_within")})
    from reyn_core.jsondata import canonical_json, depth_within

    assert (getattr_("canonical_json"), getattr_("depth_within")) == (canonical_json, depth_within)
    assert dir_() == ["canonical_json", "depth_within"]


def test_a_relative_module_is_resolved_against_the_package():
    _, getattr_, _ = _exports({".walk": ("subschemas",), "..jsondata": ("depth_within",)})
    from reyn_core.jsondata import depth_within
    from reyn_core.validation.walk import subschemas

    assert getattr_("subschemas") is subschemas and getattr_("depth_within") is depth_within


def test_an_unknown_name_is_an_attribute_error_naming_the_package():
    _, getattr_, _ = _exports({"reyn_core.jsondata": ("canonical_json",)})
    with pytest.raises(AttributeError, match=r"'reyn_core\.validation' has no attribute 'nope'"):
        getattr_("nope")


def test_nothing_is_imported_before_first_access(monkeypatch):
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    _, getattr_, dir_ = _exports({"colorsys": ("rgb_to_hsv",)})
    assert "rgb_to_hsv" in dir_() and "colorsys" not in sys.modules
    getattr_("rgb_to_hsv")
    assert "colorsys" in sys.modules
