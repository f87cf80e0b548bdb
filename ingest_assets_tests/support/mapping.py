"""Mapping test material: realistic records of hubs no shared fixture holds a record of (Calisphere (CDL), NJ/DE
Digital Collective, Ithaka), for the tests and the mapping benchmark; the plain JMESPath evaluation the fast JSON
paths are compared with."""

from __future__ import annotations

import jmespath
from jmespath.exceptions import JMESPathError

from ingest_assets.records.mapping.json_paths import JsonPaths, JsonSelection

# the fields CdlMapping reads, values from a Calisphere photograph record
CALISPHERE = {
    "id": "ark:/13030/kt2g5019mv",
    "title_ss": ["Mission San Juan Capistrano, ruins of the great stone church"],
    "alternative_title_ss": ["San Juan Capistrano mission"],
    "creator_ss": ["Pierce, C.C. (Charles C.), 1861-1946"],
    "contributor_ss": ["California Historical Society"],
    "date_ss": ["circa 1900"],
    "description": ["Photograph of the ruins of the stone church.", "Gift of the Title Insurance and Trust Company."],
    "subject_ss": ["Missions--California.", "San Juan Capistrano (Calif.); Church buildings"],
    "coverage_ss": ["San Juan Capistrano (Calif.)"],
    "temporal_ss": ["1900-1909"],
    "type": ["image"],
    "format": ["photographic print", "image", "8 x 10 in."],
    "extent_ss": ["1 photographic print"],
    "genre_ss": ["photographs"],
    "identifier_ss": ["CHS-1234", "ark:/13030/kt2g5019mv"],
    "language_ss": ["English"],
    "publisher_ss": ["California Historical Society"],
    "relation_ss": ["Title Insurance and Trust, and C.C. Pierce Photography Collection"],
    "rights_ss": ["Please contact the contributing institution for more information regarding the copyright."],
    "rights_note_ss": ["Copyright undetermined."],
    "rightsholder_ss": ["USC Libraries"],
    "rights_uri": "http://rightsstatements.org/vocab/UND/1.0/",
    "collection_name": ["Title Insurance and Trust, and C.C. Pierce Photography Collection, 1860-1960"],
    "campus_name": ["University of Southern California"],
    "repository_name": ["USC Libraries Special Collections", "University of Southern California Digital Library"],
    "url_item": "https://calisphere.org/item/ark:/13030/kt2g5019mv/",
    "reference_image_md5": "6a1c2c1b2f0e7bd33f0d4b67a3e8a1e2",
}

# NJ/DE Digital Collective: qualified DC with EDM links, as its aggregator serves it (values from a Rutgers record)
NJDE_RECORD = (
    '<record xmlns="http://www.openarchives.org/OAI/2.0/"><header><identifier>oai:njde:rutgers-lib:12345</identifier>'
    '</header><metadata><oai_qdc:qualifieddc xmlns:oai_qdc="http://worldcat.org/xmlschemas/qdc-1.0/" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
    'xmlns:edm="http://www.europeana.eu/schemas/edm/">'
    "<dcterms:title>Camden Iron Works, Camden, N.J.</dcterms:title>"
    "<dcterms:creator>Detroit Publishing Co.</dcterms:creator>"
    "<dcterms:contributor>Rutgers University Libraries</dcterms:contributor>"
    "<dcterms:date>1900-1910</dcterms:date>"
    "<dcterms:description>View of the iron works from the Delaware River.</dcterms:description>"
    "<dcterms:extent>1 photographic print</dcterms:extent><dcterms:format>Photographs</dcterms:format>"
    "<dcterms:identifier>https://doi.org/doi:10.7282/T3NJDE01</dcterms:identifier>"
    "<dcterms:language>English</dcterms:language><dcterms:spatial>Camden (N.J.)</dcterms:spatial>"
    "<dcterms:subject>Iron industry and trade</dcterms:subject><dcterms:subject>Industrial buildings</dcterms:subject>"
    "<dcterms:type>Image</dcterms:type><dcterms:isPartOf>New Jersey Postcards</dcterms:isPartOf>"
    "<dc:rights>Rights are held by the creator.</dc:rights>"
    "<edm:rights>http://rightsstatements.org/vocab/NoC-US/1.0/</edm:rights>"
    "<edm:dataProvider>Rutgers University Libraries</edm:dataProvider>"
    "<edm:dataProvider>Special Collections</edm:dataProvider>"
    "<edm:isShownAt>https://rucore.libraries.rutgers.edu/rutgers-lib/12345/</edm:isShownAt>"
    "<edm:preview>https://rucore.libraries.rutgers.edu/rutgers-lib/12345/thumbnail.jpg</edm:preview>"
    "</oai_qdc:qualifieddc></metadata></record>"
)

# JSTOR Forum's OAI-PMH record as IthakaMapping's own example carries it (its DC elements in the oai_dc namespace)
ITHAKA_RECORD = """<record>
  <header xmlns="http://www.openarchives.org/OAI/2.0/"><identifier>2841861</identifier>
    <datestamp>2025-02-13T14:49:13Z</datestamp></header>
  <metadata xmlns="http://www.openarchives.org/OAI/2.0/">
    <oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://www.openarchives.org/OAI/2.0/oai_dc/">
      <oai_dc:title> Hooigracht. 's GRAVENHAGE. [Hooigracht (canal), The Hague]; verso: Grand
        Bazar de la Paix. [divided back, no message] </oai_dc:title>
      <oai_dc:title>overall</oai_dc:title>
      <oai_dc:creator> Probably Grand Bazar de la Paix (publisher, Dutch, act. ca.1907-1914) </oai_dc:creator>
      <oai_dc:creator>Unknown</oai_dc:creator>
      <oai_dc:contributor>Watkinson Library|Trinity College: Hartford</oai_dc:contributor>
      <oai_dc:subject> Postcards; Netherlands; Holland (historical region); Architecture;
        Hague (The) (Zuid-Holland, Netherlands); Canals </oai_dc:subject>
      <oai_dc:date>ca.1907-1914 (publication date)</oai_dc:date>
      <oai_dc:type>Picture postcard</oai_dc:type>
      <oai_dc:format>cardstock|paper</oai_dc:format>
      <oai_dc:format>9 x 14 cm (3.54 x 5.51 inches) approximately</oai_dc:format>
      <oai_dc:identifier>Box 12.54-10</oai_dc:identifier>
      <oai_dc:identifier>534724</oai_dc:identifier>
      <oai_dc:identifier> Thumbnail:https://forum.jstor.org/oai/thumbnail?id=2841861 </oai_dc:identifier>
      <oai_dc:identifier> Medias:https://forum.jstor.org/oai/medias/2841861 </oai_dc:identifier>
      <oai_dc:identifier>
        ADLImageViewer:https://www.jstor.org/stable/10.2307/community.2841861 </oai_dc:identifier>
      <oai_dc:identifier>
        SSCImageViewer:https://www.jstor.org/stable/10.2307/community.2841861 </oai_dc:identifier>
      <oai_dc:coverage>Dutch</oai_dc:coverage>
      <oai_dc:rights> This digital collection and its contents are made available by Trinity
        College Library for limited noncommercial, educational, and personal use only. </oai_dc:rights>
    </oai_dc:dc>
  </metadata>
</record>"""

# hub -> its realistic record, for hubs whose ingestion3 test reads no record of theirs
HUB_RECORDS = {"njde": NJDE_RECORD, "ithaka": ITHAKA_RECORD}


class PlainJsonPaths(JsonPaths):
    """``JsonPaths`` whose every expression is evaluated by ``jmespath.search`` by itself (no walk, no compiling):
    what the fast selection must agree with."""

    def __init__(self) -> None:
        super().__init__()
        self.expressions: list[str] = []

    def child(self, each: str | None = None) -> PlainJsonPaths:
        return PlainJsonPaths()

    def add(self, expr: str) -> int:
        key = super().add(expr)
        if key == len(self.expressions):
            self.expressions.append(expr)
        return key

    add_nodes = add_condition = add

    def select(self, document, record=None) -> JsonSelection:
        return JsonSelection(document, {key: search(expr, document) for key, expr in enumerate(self.expressions)},
                             [None] * len(self.expressions))


def search(expr: str, document):
    """``jmespath.search``, None where it raises a type error (as a selection answers)."""
    try:
        return jmespath.search(expr, document)
    except JMESPathError:
        return None
