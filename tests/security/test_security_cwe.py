"""CWE names and planning candidates: the package's own text by default, a catalog on request."""

from __future__ import annotations

import json

import pytest

from agentpost.errors import InputError
from agentpost.security.cwe import load_names, load_plan_match
from agentpost.security.suite import load_suite


def test_every_suite_cwe_has_a_name_and_a_description():
    names = load_names()
    for task in load_suite():
        for c in task.cwes:
            assert names[str(c)]["name"] and names[str(c)]["description"], c


def test_the_package_text_is_not_mitres(shared_data):
    """The shipped descriptions are ours: none equals the official catalog's text."""
    catalog = shared_data / "security" / "cwe_catalog_v4.14.jsonl"
    official = load_names(catalog)
    own = load_names()
    assert own.keys() == official.keys()
    for k in own:
        assert own[k]["description"] != official[k]["description"], k
        assert own[k]["name"] != official[k]["name"], k


def test_a_catalog_replaces_known_ids_and_leaves_the_rest(tmp_path, monkeypatch):
    cat = tmp_path / "cat.jsonl"
    cat.write_text(
        json.dumps({"id": "CWE-22", "name": "Official 22", "description": "D22"}) + "\n"
        + json.dumps({"id": "CWE-99999", "name": "unknown id", "description": "x"}) + "\n"
    )  # fmt: skip
    names = load_names(cat)
    assert names["22"] == {"name": "Official 22", "description": "D22"}
    assert "99999" not in names and names["79"] == load_names()["79"]
    monkeypatch.setenv("AGENTPOST_CWE_CATALOG", str(cat))
    assert load_names()["22"]["name"] == "Official 22"


def test_a_bad_catalog_names_the_file_and_line(tmp_path):
    cat = tmp_path / "cat.jsonl"
    cat.write_text('{"id": "CWE-22", "name": "x"}\n{"id": 22}\n')
    with pytest.raises(InputError, match=r"cat.jsonl: line 2"):
        load_names(cat)


def test_plan_match_default_is_consistent():
    m = load_plan_match()
    allowed = set(m["allowed"])
    assert len(allowed) == len(m["allowed"]) == 40
    grouped = [c for members in m["theme_groups"].values() for c in members]
    assert sorted(grouped) == sorted(allowed)  # every candidate in exactly one theme
    assert all(p in allowed and set(ch) <= allowed for p, ch in m["generic_parent"].items())
    suite_cwes = {f"CWE-{c}" for t in load_suite() for c in t.cwes}
    assert suite_cwes <= allowed


def test_plan_match_from_the_release_candidate_sets(shared_data):
    m = load_plan_match(shared_data / "security" / "cwe_candidate_sets.json")
    assert len(m["allowed"]) == 40 and "CWE-22" in m["allowed"]
    assert m["generic_parent"]["CWE-20"] and m["theme_groups"]


def test_a_bad_candidate_set_file_names_the_field(tmp_path):
    bad = tmp_path / "sets.json"
    bad.write_text(json.dumps({"securegen_planning_allowed_40": {"ids": "CWE-22"}}))
    with pytest.raises(InputError, match=r"securegen_planning_allowed_40\.ids"):
        load_plan_match(bad)
