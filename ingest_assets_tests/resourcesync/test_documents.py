"""Our documents parse with resync's own classes and have the structure of the v1.1 spec examples."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from urllib.parse import unquote
from urllib.request import urlopen

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree
from resync.capability_list import CapabilityList
from resync.change_list import ChangeList
from resync.resource_list import ResourceList
from resync.source_description import SourceDescription

from ingest_assets.resourcesync.documents import resource_entries, resource_entry
from ingest_assets.resourcesync.model import ResourceSet

SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
RS = "{http://www.openarchives.org/rs/terms/}"
PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def shape(data: bytes) -> dict:
    """What a v1.1 document is made of: root, capability, rs:ln rels and rs:md attributes at the top,
    the element names and rs:md attributes of its entries."""
    root = etree.fromstring(data, PARSER)
    md = root.find(f"{RS}md")
    entries = root.findall(f"{SM}url") + root.findall(f"{SM}sitemap")
    return {
        "root": etree.QName(root).localname,
        "capability": md.get("capability") if md is not None else None,
        "md": set(md.attrib) if md is not None else set(),
        "ln": {ln.get("rel") for ln in root.findall(f"{RS}ln")},
        "entry": {etree.QName(e).localname for e in entries},
        "children": set().union(*({etree.QName(c).localname for c in e if c.tag != f"{RS}ln"} for e in entries)),
        "entry_ln": {ln.get("rel") for e in entries for ln in e.findall(f"{RS}ln")},
        "entry_md": set().union(*(set(m.attrib) for e in entries for m in e.findall(f"{RS}md"))),
    }


def assert_same_structure(ours: bytes, fixture: bytes) -> None:
    """Ours has everything the spec example has (plus optional extras), except its ``describedby`` links."""
    mine, spec = shape(ours), shape(fixture)
    assert (mine["root"], mine["capability"], mine["entry"]) == (spec["root"], spec["capability"], spec["entry"])
    assert spec["md"] <= mine["md"]
    assert spec["ln"] - {"describedby"} <= mine["ln"]
    assert spec["children"] <= mine["children"]
    assert spec["entry_ln"] - {"describedby"} <= mine["entry_ln"]
    assert spec["entry_md"] - {"capability"} <= mine["entry_md"]


def get(url: str) -> bytes:
    with urlopen(url, timeout=10) as response:
        assert response.headers["Content-Type"].startswith("application/xml")
        return response.read()


@pytest.fixture
def published(source, t0):
    """Five resources (ugly names, two hashes, a link), two changed again later, one deleted; a
    Resource List Index of 2-entry components and daily Change Lists."""
    src = source(limit=2)
    src.put(
        "a&b c/é.txt",
        "unicode ø".encode(),
        t0,
        links=[{"rel": "describedby", "href": "meta/e.xml", "mime": "application/xml"}],
    )
    src.put("meta/e.xml", b"<m/>", t0 + timedelta(minutes=1))
    for i in range(3):
        src.put(f"r{i}.txt", f"r{i}".encode(), t0 + timedelta(hours=2 + i))
    src.put("r0.txt", b"r0 again", t0 + timedelta(days=1))
    src.delete("r1.txt", t0 + timedelta(days=1, hours=1))
    src.put("r0.txt", b"r0 third", t0 + timedelta(days=1, hours=2))
    src.publish()
    return src


def test_source_description_and_capability_list(published, shared_fixtures):
    base = published.base
    sd = SourceDescription()
    sd.read(uri=f"{base}/.well-known/resourcesync")
    assert sd.capability == "description"
    assert [r.uri for r in sd] == [f"{base}/set1/capabilitylist.xml"]
    assert_same_structure(
        get(f"{base}/.well-known/resourcesync"),
        (shared_fixtures / "resourcesync/spec-v1.1-ex12-source-description.xml").read_bytes(),
    )

    caps = CapabilityList()
    caps.read(uri=f"{base}/set1/capabilitylist.xml")
    assert caps.capability == "capabilitylist"
    assert caps.link("up")["href"] == f"{base}/.well-known/resourcesync"
    assert caps.capability_info("changelist").uri == f"{base}/set1/changelist.xml"
    assert caps.capability_info("resourcelist").uri.startswith(f"{base}/set1/resourcelist/")
    fixture = (shared_fixtures / "resourcesync/spec-v1.1-ex13-capabilitylist.xml").read_bytes()
    mine, spec = shape(get(f"{base}/set1/capabilitylist.xml")), shape(fixture)
    assert (mine["root"], mine["capability"], mine["ln"]) == (spec["root"], spec["capability"], {"up"})


def test_resource_list_index_with_components(published, shared_fixtures, t0):
    caps = CapabilityList()
    caps.read(uri=f"{published.base}/set1/capabilitylist.xml")
    index_url = caps.capability_info("resourcelist").uri
    index = get(index_url)
    assert_same_structure(
        index, (shared_fixtures / "resourcesync/spec-v1.1-ex15-resourcelist-index-sitemapindex.xml").read_bytes()
    )
    components = [e.findtext(f"{SM}loc") for e in etree.fromstring(index, PARSER).findall(f"{SM}sitemap")]
    assert [c.rsplit("/", 1)[1] for c in components] == ["resourcelist-00001.xml", "resourcelist-00002.xml"]
    for url in components:
        assert_same_structure(get(url), (shared_fixtures / "resourcesync/spec-v1.1-ex14-resourcelist.xml").read_bytes())
        assert {ln.get("rel"): ln.get("href") for ln in etree.fromstring(get(url), PARSER).findall(f"{RS}ln")} == {
            "up": f"{published.base}/set1/capabilitylist.xml",
            "index": index_url,
        }

    resources = ResourceList()
    resources.read(uri=index_url)
    assert resources.capability == "resourcelist" and resources.md_at and resources.md_completed
    prefix = f"{published.base}/set1/resources/"
    by_uri = {r.uri: r for r in resources}
    assert sorted(by_uri) == [prefix + p for p in ("a&b%20c/%C3%A9.txt", "meta/e.xml", "r0.txt", "r2.txt")]
    ugly = by_uri[prefix + "a&b%20c/%C3%A9.txt"]
    data = "unicode ø".encode()
    assert (ugly.md5, ugly.sha256, ugly.length, ugly.mime_type) == (
        hashlib.md5(data).hexdigest(),
        hashlib.sha256(data).hexdigest(),
        len(data),
        "text/plain",
    )
    assert ugly.ln == [{"rel": "describedby", "href": prefix + "meta/e.xml", "mime_type": "application/xml"}]
    assert by_uri[prefix + "r0.txt"].timestamp == (t0 + timedelta(days=1, hours=2)).timestamp()
    with urlopen(prefix + "a%26b%20c/%C3%A9.txt", timeout=10) as response:  # and the server serves it
        assert response.read() == data


def test_change_lists_per_day_and_their_index(published, shared_fixtures, t0):
    base = published.base
    index = get(f"{base}/set1/changelist.xml")
    assert_same_structure(index, (shared_fixtures / "resourcesync/spec-v1.1-ex20-changelist-index.xml").read_bytes())
    sitemaps = etree.fromstring(index, PARSER).findall(f"{SM}sitemap")
    # limit 2 also splits each day's Change List: day 1 has 5 changes -> 3 lists, day 2 has 3 -> 2
    bounds = [(s.find(f"{RS}md").get("from"), s.find(f"{RS}md").get("until")) for s in sitemaps]
    assert bounds == [
        ("2026-01-05T00:00:00Z", "2026-01-05T11:00:00Z"),
        ("2026-01-05T11:00:00Z", "2026-01-05T13:00:00Z"),
        ("2026-01-05T13:00:00Z", "2026-01-06T00:00:00Z"),
        ("2026-01-06T00:00:00Z", "2026-01-06T11:00:00Z"),
        ("2026-01-06T11:00:00Z", "2026-01-07T00:00:00Z"),
    ]
    spec = (shared_fixtures / "resourcesync/spec-v1.1-ex21-changelist-with-deleted.xml").read_bytes()
    entries = []
    for sitemap in sitemaps:
        url = sitemap.findtext(f"{SM}loc")
        assert_same_structure(get(url), spec)
        changes = ChangeList()
        changes.read(uri=url)
        assert changes.link("index")["href"] == f"{base}/set1/changelist.xml"
        entries += [(r.uri.rsplit("/", 1)[1], r.change, r.ts_datetime - t0.timestamp()) for r in changes]
    hour = 3600
    assert entries == [
        ("%C3%A9.txt", "created", 0),
        ("e.xml", "created", 60),
        ("r0.txt", "created", 2 * hour),
        ("r1.txt", "created", 3 * hour),
        ("r2.txt", "created", 4 * hour),
        ("r0.txt", "updated", 24 * hour),
        ("r1.txt", "deleted", 25 * hour),
        ("r0.txt", "updated", 26 * hour),
    ]


def test_spec_examples_have_the_shapes_we_compare(shared_fixtures):
    """The comparison itself tells documents apart (a plain sitemapindex is no Resource List Index)."""
    folder = shared_fixtures / "resourcesync"
    plain = shape((folder / "resync-plain-sitemapindex-no-rs.xml").read_bytes())
    spec_index = (folder / "spec-v1.1-ex15-resourcelist-index-sitemapindex.xml").read_bytes()
    assert plain["capability"] is None and plain["root"] == "sitemapindex"
    with pytest.raises(AssertionError):
        assert_same_structure((folder / "resync-plain-sitemapindex-no-rs.xml").read_bytes(), spec_index)
    relative = shape((folder / "resync-explore1-source-description-relative-urls.xml").read_bytes())
    assert relative["capability"] == "description" and relative["entry_md"] == {"capability"}


@settings(max_examples=150, deadline=None)
@given(
    segments=st.lists(
        st.text(min_size=1, max_size=8).filter(lambda s: "/" not in s and s not in (".", "..")), min_size=1, max_size=3
    ),
    md5=st.one_of(st.none(), st.from_regex(r"[0-9a-f]{32}", fullmatch=True)),
    sha256=st.one_of(st.none(), st.just("e" * 64)),
    length=st.one_of(st.none(), st.integers(0, 10**12)),
    mime=st.sampled_from([None, "text/plain", "application/ld+json; charset=utf-8"]),
    lastmod=st.sampled_from([None, "2026-01-05T09:00:00.000Z", "2026-01-05T09:00:00.123Z"]),
    links=st.sampled_from(
        [[], [{"rel": "describedby", "href": {"type": "rel_path", "value": "m/x.xml"}, "mime": None}]]
    ),
)
def test_inline_rendering_of_the_common_shape_equals_the_general_one(
    segments, md5, sha256, length, mime, lastmod, links
):
    rs = ResourceSet("set1", "https://data.example.org/set1/")
    doc = {
        "resource_set": "set1",
        "location": {"type": "rel_path", "value": "/".join(segments)},
        "length": length,
        "md5": md5,
        "sha256": sha256,
        "mime": mime,
        "lastmod": lastmod,
        "ln": links,
        "timestamp": lastmod,
    }
    if "\\" in doc["location"]["value"]:
        return  # refused at record time, never stored
    [fast] = resource_entries(rs, [doc])
    assert fast == resource_entry(rs, doc)
    wrapped = f'<urlset xmlns="{SM[1:-1]}" xmlns:rs="{RS[1:-1]}">{fast}</urlset>'
    parsed = etree.fromstring(wrapped.encode(), PARSER)
    assert unquote(parsed.findtext(f"{SM}url/{SM}loc")) == "https://data.example.org/set1/" + doc["location"]["value"]
