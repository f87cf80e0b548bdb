"""The documentation holds together: every relative link of the README, ARCHITECTURE.md, docs/ and
benchmarks/README.md names a file of the repository and a heading that exists (GitHub's anchor rules), every
page of docs/ is reachable from the README, ARCHITECTURE.md and the docs index, and the README stays short."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest_assets_tests.support.markdown import anchors, broken_links, links

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", ROOT / "benchmarks" / "README.md", *sorted(DOCS.glob("*.md"))]
README_MOST_LINES = 250  # one screen or two, a table of hubs included


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    assert broken_links(page, ROOT) == []


@pytest.mark.parametrize("index", ["README.md", "ARCHITECTURE.md", "docs/README.md"])
def test_every_docs_page_is_linked_from(index):
    page = ROOT / index
    linked = {(page.parent / href.partition("#")[0]).resolve() for href in links(page.read_text(encoding="utf-8"))}
    missing = [p.name for p in sorted(DOCS.glob("*.md")) if p != page and p not in linked]
    assert missing == [], f"{index} links none of these pages"


def test_the_readme_stays_short():
    lines = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert lines <= README_MOST_LINES, f"README.md has {lines} lines: move the detail into docs/"


def test_anchors_follow_githubs_rules():
    page = ("# Rollback: `ingest-assets index status|rollback|remove`\n## With Dagster's `dg`\n"
            "## Storage layout (record pipeline)\n## Notes\n## Notes\n```\n# not a heading\n```\n")
    assert anchors(page) == {"rollback-ingest-assets-index-statusrollbackremove", "with-dagsters-dg",
                             "storage-layout-record-pipeline", "notes", "notes-1"}


def test_a_broken_link_or_anchor_is_reported(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("# Here\n[ok](other.md#other-page) [ok](#here) [web](https://example.org/x.md)\n"
                    "[gone](missing.md) [bad anchor](other.md#nope) [outside](../elsewhere.md) `[code](x.md)`\n",
                    encoding="utf-8")
    assert broken_links(page, tmp_path) == [
        "missing.md: no such file in the repository",
        "other.md#nope: no heading with that anchor in other.md",
        "../elsewhere.md: no such file in the repository",
    ]
