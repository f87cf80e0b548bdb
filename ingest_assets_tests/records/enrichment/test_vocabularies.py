"""Language (ISO 639-3 via iso639-lang), DCMI type and rights URI normalization."""

from __future__ import annotations

import pytest
from iso639 import Lang

from ingest_assets.records.enrichment import normalize_language, normalize_rights, normalize_type
from ingest_assets.records.enrichment.dcmitype import TERMS, dpla_label


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("en", ("eng", "English")),  # ISO 639-1
        ("eng", ("eng", "English")),  # ISO 639-2/3
        ("fre", ("fra", "French")),  # ISO 639-2/B -> 639-3
        ("ger", ("deu", "German")),
        ("EN-us", ("eng", "English")),  # BCP 47 tag
        ("English", ("eng", "English")),
        ("english;", ("eng", "English")),  # any case, CONTENTdm delimiter
        ("French (France)", ("fra", "French")),
        ("Russian", ("rus", "Russian")),
        ("und", ("und", "Undetermined")),  # Harvard LibraryCloud's coded value
        ("Undefined", None),
        ("Elvish", None),
        ("", None),
        ("x", None),
    ],
)
def test_language(value, expected):
    assert normalize_language(value) == expected


def test_language_names_come_from_the_iso639_package():
    for code in ("nld", "ukr", "haw", "chr"):
        assert normalize_language(code) == (code, Lang(code).name)
        assert normalize_language(Lang(code).name.upper()) == (code, Lang(code).name)
    assert normalize_language("spa") == ("spa", "Spanish")
    assert normalize_language("qqq") is None


def test_dcmi_terms_are_the_vocabulary():
    assert TERMS == {
        "Collection", "Dataset", "Event", "Image", "InteractiveResource", "MovingImage", "PhysicalObject",
        "Service", "Software", "Sound", "StillImage", "Text",
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Image", "Image"),
        ("text", "Text"),  # MODS typeOfResource
        ("still image", "StillImage"),
        ("sound recording-musical", "Sound"),
        ("three dimensional object", "PhysicalObject"),
        ("Photographs", "StillImage"),
        ("Video", "MovingImage"),
        ("info:eu-repo/semantics/article", "Text"),  # Zenodo
        ("http://purl.org/dc/dcmitype/StillImage", "StillImage"),
        ("Dataset", "Dataset"),
        ("mixed material", None),
        ("jpeg", None),
    ],
)
def test_type(value, expected):
    assert normalize_type(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://rightsstatements.org/page/InC/1.0/?language=en", "http://rightsstatements.org/vocab/InC/1.0/"),
        ("http://rightsstatements.org/vocab/NoC-OKLR/1.0", "http://rightsstatements.org/vocab/NoC-OKLR/1.0/"),
        (" http://rightsstatements.org/vocab/NoC-OKLR/1.0/ ", "http://rightsstatements.org/vocab/NoC-OKLR/1.0/"),
        ("https://creativecommons.org/licenses/by-nc/4.0/legalcode", "http://creativecommons.org/licenses/by-nc/4.0/"),
        ("http://www.creativecommons.org/licenses/BY/3.0/deed.de", "http://creativecommons.org/licenses/by/3.0/"),
        ("https://creativecommons.org/publicdomain/zero/1.0#x", "http://creativecommons.org/publicdomain/zero/1.0/"),
        ("https://rightsstatements.org", None),
        ("http://example.org/rights/", None),
        ("info:eu-repo/semantics/openAccess", None),
        ("Copyright held by the library", None),
    ],
)
def test_rights(value, expected):
    assert normalize_rights(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [  # ingestion3's TypeEnrichmentTest: Image -> image, book -> text, Bucket -> none
        ("Image", "image"),
        ("book", "text"),
        ("Bucket", None),
        ("Photographs", "image"),
        ("Video", "moving image"),
        ("three dimensional object", "physical object"),
        ("website", "interactive resource"),
        ("http://purl.org/dc/dcmitype/Dataset", "dataset"),
    ],
)
def test_dpla_type_labels(value, expected):
    term = normalize_type(value)
    assert (dpla_label(term) if term else None) == expected
