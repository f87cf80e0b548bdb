"""Provider type values -> DCMI Type Vocabulary terms (term list from rdflib's DCMITYPE namespace), and the
labels DPLA gives those terms in its records (``image``, ``moving image``, ...)."""

from __future__ import annotations

import re
from functools import lru_cache

from rdflib.namespace import DCMITYPE

TERMS: frozenset[str] = frozenset(DCMITYPE.__annotations__)

# Common provider values (lower case, letters and digits only) for each DCMI term.
_SYNONYMS = {
    "StillImage": "photograph photographs photo photos picture pictures drawing drawings painting paintings print"
    " prints poster posters postcard postcards slide slides lanternslide negative negatives stillimage",
    "Image": "image images map maps cartographic cartographicmaterial atlas graphic graphics illustration"
    " illustrations artwork",
    "Text": "text texts textual article articles book books manuscript manuscripts letter letters correspondence"
    " thesis theses doctoralthesis masterthesis bachelorthesis report reports newspaper newspapers periodical"
    " periodicals journal journals journalarticle conferenceobject conferencepaper preprint bookpart booksection"
    " document documents notatedmusic sheetmusic pamphlet pamphlets publication workingpaper review",
    "Sound": "sound sounds audio soundrecording soundrecordingmusical soundrecordingnonmusical music recording"
    " oralhistory podcast",
    "MovingImage": "movingimage movingimages video videos film films motionpicture motionpictures",
    "PhysicalObject": "physicalobject physicalobjects object objects artifact artifacts artefact artefacts"
    " threedimensionalobject 3dobject realia specimen specimens",
    "Dataset": "dataset datasets data researchdata",
    "Software": "software softwaremultimedia code computerprogram",
    "InteractiveResource": "interactiveresource website websites webpage multimedia",
    "Collection": "collection collections",
    "Event": "event events",
    "Service": "service services",
}
_LOOKUP = {word: term for term, words in _SYNONYMS.items() for word in words.split()}
_LOOKUP.update({term.lower(): term for term in TERMS})
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


@lru_cache(maxsize=4096)
def normalize_type(value: str) -> str | None:
    """The DCMI Type term for a provider value (also a DCMITYPE or info:eu-repo URI), else ``None``."""
    text = value.strip().rstrip("/")
    tail = text.rsplit("/", 1)[-1] if ("/" in text and ":" in text) else text
    for candidate in (text, tail):
        term = _LOOKUP.get(_NOT_ALNUM.sub("", candidate.lower()))
        if term:
            return term
    return None


# DPLA writes a term's label in lower case with spaces, and files still images under "image" (as ingestion3's
# type vocabulary does with photographs, prints and negatives).
_DPLA_LABELS = {"StillImage": "image", "MovingImage": "moving image", "PhysicalObject": "physical object",
                "InteractiveResource": "interactive resource"}


def dpla_label(term: str) -> str:
    """The label DPLA uses for a DCMI Type term: ``StillImage`` -> ``image``, ``MovingImage`` -> ``moving image``."""
    return _DPLA_LABELS.get(term) or term.lower()
