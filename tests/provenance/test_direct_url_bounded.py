"""``direct_url.json`` is a distribution's metadata, text from outside (issue 24): bounded in JSON
values before it is parsed and read with JSON's numbers only; a file that is not is reported as a
problem (source unknown), as a malformed one is."""

from __future__ import annotations

import json
from importlib.metadata import PathDistribution
from pathlib import Path

from reyn_core.loading.step3_provenance.direct_url import MAX_DIRECT_URL_VALUES, source_of

EDITABLE = {"url": "file:///src/demo", "dir_info": {"editable": True}}


def dist_with(tmp_path: Path, text: str) -> PathDistribution:
    info = tmp_path / "demo-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n", encoding="utf-8")
    (info / "direct_url.json").write_text(text, encoding="utf-8")
    return PathDistribution(info)


def test_a_pep_610_record_is_read(tmp_path: Path) -> None:
    padded = dict(EDITABLE, pad=[0] * (MAX_DIRECT_URL_VALUES // 2))
    source = source_of(dist_with(tmp_path, json.dumps(padded)))
    assert (source.kind, source.url, source.problems) == ("editable", "file:///src/demo", ())


def test_a_record_of_more_values_than_the_bound_is_a_problem(tmp_path: Path) -> None:
    padded = dict(EDITABLE, pad=[0] * MAX_DIRECT_URL_VALUES)
    source = source_of(dist_with(tmp_path, json.dumps(padded)))
    assert source.kind == "index"
    assert f"more than {MAX_DIRECT_URL_VALUES} JSON values" in source.problems[0]


def test_a_record_holding_nan_is_a_problem(tmp_path: Path) -> None:
    source = source_of(dist_with(tmp_path, json.dumps(dict(EDITABLE, size=float("nan")))))
    assert source.kind == "index" and "NaN is not JSON" in source.problems[0]
