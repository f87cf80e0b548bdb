"""``JsonPaths`` answers every JMESPath expression as ``jmespath.search`` does, whether it reads the expression's
keys in its walk and compiles the rest or leaves the expression to jmespath: on generated documents and
expressions, and on every JSON hub's real records mapped whole. Documents parsed by orjson map as the stdlib's
parse maps them, integers beyond 64 bits included."""

from __future__ import annotations

import json
from pathlib import Path

import jmespath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.mapping import embedded, mapper_for, profiles
from ingest_assets.records.mapping.json_paths import JsonPaths, compile_path, exact_numbers, strings
from ingest_assets.records.preview import read_inputs
from ingest_assets.records.mapping.profiles import PROFILES
from ingest_assets_tests.support.mapping import CALISPHERE, PlainJsonPaths, search
from ingest_assets_tests.support.parity import hubs

KEYS = ["a", "b", "@id"]

scalars = st.none() | st.booleans() | st.integers(-1, 2) | st.sampled_from(["", " ", "x", " y "])
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.fixed_dictionaries({}, optional={key: inner for key in KEYS}), max_leaves=10)
documents = st.fixed_dictionaries({"a": values}, optional={"b": values, "@id": values})  # a record: an object
keys = st.sampled_from(["a", "a", "b", '"@id"'])
suffixes = (st.sampled_from(["[]", "[*]", "[0]", "[-1]", "[1:]", "[:-1]", "[?a]", ".*", " | [0]", "[].a", "[*].b"])
            | keys.map(".{}".format) | st.tuples(keys, keys).map(".[{0[0]}, {0[1]}]".format))
starts = (st.lists(keys, min_size=1, max_size=3).map(".".join)
          | st.sampled_from(["@", "[a, b]", "`\"lit\"`", "length(a)", "join(', ', a)", "a || b"]))
expressions = st.builds(lambda start, rest: start + "".join(rest), starts, st.lists(suffixes, max_size=3))


@settings(max_examples=150, deadline=None)
@given(st.lists(expressions, min_size=1, max_size=6), st.lists(documents, min_size=1, max_size=3))
def test_selection_agrees_with_jmespath_on_generated_documents(exprs, docs):
    fast, plain = JsonPaths(), PlainJsonPaths()
    ids = [(expr, fast.add(expr), plain.add(expr)) for expr in exprs]  # shared key prefixes: one tree
    for doc in docs:
        quick, slow = fast.select(doc), plain.select(doc)
        for expr, one, other in ids:
            assert quick.strings(one) == slow.strings(other) == strings(search(expr, doc)), (expr, doc)
            assert quick.nodes(one) == slow.nodes(other), (expr, doc)
            assert quick.holds(one) == slow.holds(other), (expr, doc)
            assert compile_path(expr)(doc) == search(expr, doc), (expr, doc)


def test_key_paths_are_walked_and_the_rest_compiled():
    doc = {"a": {"b": [{"c": " x "}, {"c": ["y", 2, None, {"d": 1}]}, {"e": 1}], "@id": "http://e/1"}}
    paths = JsonPaths()
    cases = {"a.b[].c": ["x", "y", "2"], "a.b[-1].e": ["1"], 'a."@id"': ["http://e/1"], "a.b[:1].c": ["x"],
             "a.[\"@id\", b[0].c]": ["http://e/1", "x"], "a.b[?c].c | [1]": ["y", "2"], "@.a.b[0].c": ["x"]}
    ids = {expr: paths.add(expr) for expr in cases}
    assert paths.add("a.b[].c") == ids["a.b[].c"]  # one id per distinct expression
    items, absent = paths.add_nodes("a.b"), paths.add_condition("a.z")
    selection = paths.select(doc)
    for expr, expected in cases.items():
        assert selection.strings(ids[expr]) == expected == strings(jmespath.search(expr, doc)), expr
    assert selection.nodes(items) == doc["a"]["b"]
    assert not selection.holds(absent)


def test_compiled_projections_flattens_and_indexes_give_what_jmespath_gives():
    doc = {"a": [[1, [2]], None, {"b": [None, "x", ["y"]]}, 3], "b": {"a": None}}
    exprs = ["a[]", "a[*]", "a[][]", "a[-1]", "a[-5]", "a[4]", "a[1:]", "a[::-2]", "b.[a, b]", "z.[a]", "a[*].b[*]",
             "a[].b[]", "a[2].b[0]", "a[2].b", "a.b", "b.a", "@"]
    paths = JsonPaths()
    ids = [paths.add_nodes(expr) for expr in exprs]
    selection = paths.select(doc)
    for expr, key in zip(exprs, ids):
        expected = jmespath.search(expr, doc)
        assert compile_path(expr)(doc) == expected, expr
        assert selection.nodes(key) == (expected if isinstance(expected, list) else [] if expected is None
                                        else [expected]), expr
    assert compile_path("a[]")(doc) == [1, [2], {"b": [None, "x", ["y"]]}, 3]  # one level; nulls dropped


def test_bad_expressions_raise_value_errors():
    with pytest.raises(ValueError, match="Invalid jmespath expression: Incomplete"):
        JsonPaths().add("a.[")
    with pytest.raises(ValueError, match="expected a JMESPath string"):
        JsonPaths().add(["a"])


def json_hub_originals(shared_fixtures: Path) -> dict[str, list[dict]]:
    """Every JSON profile's real records: the ingestion3 fixtures its parity files name (cdl: a Calisphere one)."""
    files: dict[str, list[str]] = {}
    for parity in hubs(json_hubs()):
        if "fixture" in parity.data:
            files.setdefault(parity.hub, []).append(str(shared_fixtures / "ingestion3" / parity.data["fixture"]))
    found = {hub: [o for o in read_inputs(names, PROFILES[hub], hub) if isinstance(o, dict)]
             for hub, names in files.items()}
    found["sd"] = found["mdl"]  # SdMapping reads MDL's JSON
    found["cdl"] = [{"id": CALISPHERE["id"], "document": json.dumps(CALISPHERE), "mimetype": "application_json"}]
    return found


def json_hubs() -> list[str]:
    return sorted(name for name, profile in PROFILES.items() if profile.source == "json")


def json_paths_of(mapper) -> JsonPaths:
    paths = mapper._paths
    return paths.json.paths if isinstance(paths, embedded.EmbeddedPaths) else paths


def test_every_json_hub_maps_its_records_as_with_plain_jmespath(shared_fixtures, monkeypatch):
    originals = json_hub_originals(shared_fixtures)
    assert set(json_hubs()) <= set(originals)
    fast = {hub: [mapper_for(ProviderEntry(hub, {"mapping": hub})).map(o) for o in found]
            for hub, found in originals.items()}
    monkeypatch.setattr(profiles, "JsonPaths", PlainJsonPaths)
    monkeypatch.setattr(embedded, "JsonPaths", PlainJsonPaths)
    compared = 0
    for hub, found in originals.items():
        mapper = mapper_for(ProviderEntry(hub, {"mapping": hub}))
        assert isinstance(json_paths_of(mapper), PlainJsonPaths)
        for original, result in zip(found, fast[hub]):
            assert mapper.map(original) == result, (hub, original["id"])
            compared += result.record is not None
    assert compared >= len(originals)  # real records mapped, not only refused ones


def test_every_json_hub_maps_its_records_as_the_stdlib_parse_does(shared_fixtures):
    for hub, found in json_hub_originals(shared_fixtures).items():
        mapper = mapper_for(ProviderEntry(hub, {"mapping": hub}))
        fast = [mapper.map(original) for original in found]
        with exact_numbers():  # every document parsed by the stdlib
            assert [mapper.map(original) for original in found] == fast, hub
        assert any(result.record is not None for result in fast), hub


def calisphere(**changed) -> dict:
    """CALISPHERE as an OriginalRecord, with ``changed`` values (a JSON string: the document as written)."""
    document = changed.pop("document", None) or json.dumps({**CALISPHERE, **changed})
    return {"id": CALISPHERE["id"], "document": document, "mimetype": "application_json"}


def test_integers_beyond_64_bits_keep_their_digits_and_floats_read_as_the_stdlib_reads_them():
    mapper = mapper_for(ProviderEntry("cdl", {"mapping": "cdl"}))
    numbers = [123456789012345678901234, -9223372036854775809, 18446744073709551615, 1e19, 0.1, 7]
    record = mapper.map(calisphere(identifier_ss=numbers)).record
    assert record["sourceResource"]["identifier"] == ["123456789012345678901234", "-9223372036854775809",
                                                      "18446744073709551615", "1e+19", "0.1", "7"]


def test_what_orjson_refuses_is_read_or_refused_as_the_stdlib_does():
    mapper = mapper_for(ProviderEntry("cdl", {"mapping": "cdl"}))
    text = json.dumps(CALISPHERE)
    with_nan = mapper.map(calisphere(document=text.replace('"type": ["image"]', '"type": [NaN, "image"]')))
    assert with_nan.record["sourceResource"]["type"] == ["nan", "image"]  # the stdlib's reading of NaN
    surrogate = mapper.map(calisphere(document=text.replace("Copyright undetermined.", "Copyright \\udc80")))
    assert "Copyright \udc80" in surrogate.record["sourceResource"]["rights"]  # a lone surrogate, as the stdlib reads it
    broken = mapper.map(calisphere(document=text[:-1]))
    with pytest.raises(ValueError) as stdlib:
        json.loads(text[:-1])
    assert broken.failed and broken.messages[0].reason == f"not well-formed JSON: {stdlib.value}"
