"""The field-rule language as a strict model: every key, its type and its constraints, checked before a rule is
compiled (``rules.py`` compiles only what this model accepted). Unknown keys are refused; errors name the field
and the dotted key inside its rule.

A rule takes its values from one *source*, then passes them through *filters* in a fixed order:

  sources    xpath (XML) / path (JSON): an expression, or a list tried in order (the first giving values wins)
             value: constant string(s)        header: a child of the record's OAI-PMH header (XML)
             first_of: rules tried in order, the first giving values wins (ordered fallbacks)
             all_of: rules whose values follow each other, in list order (then this rule's filters apply)
             concat: rules whose values are joined into one value with ``separator`` (default '')
             zip: rules whose values are paired by position, each position's values joined with ``separator``
             (titles with their volumes: ['A', 'B'] + ['vol 1'] -> ['A, vol 1', 'B'])
  each       an expression selecting items (elements, JSON values); the rest of the rule is applied to each item
             in turn, relative to it (no source: the item's own text), so values keep the items' document order
             and may carry sub-properties (below); its ``default`` is the rule's, given when no item gives a value
  when       a condition (XPath boolean / JMESPath truthiness, relative to the item under ``each``), or a rule that
             holds when it gives a value (``{xpath: mods:role/mods:roleTerm, keep_terms: creator-roles}``): the rule gives
             nothing unless it holds
  filters    split -> clean -> replace -> pattern (+ template, all_matches) -> exclude, exclude_terms, keep_terms ->
             map / map_patterns / lookup (+ unlisted) -> join -> unique -> index / first / slice -> default
  sub-properties (with ``each``; which ones depends on the field's shape, ``fields.SUB_PROPERTIES``):
             inScheme, exactMatch, closeMatch, note (agents, concepts); coordinates, city, county, state,
             country, region (places); begin, end (dates); description (collections) - each a rule of its own

A field's rule may also be a list of rules, whose values are concatenated in list order.
"""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ingest_assets.core.errors import ConfigError
from ingest_assets.records.mapping.cleaning import CLEANERS
from ingest_assets.records.mapping.fields import FIELDS, SUB_PROPERTIES

HEADER_FIELDS = ("identifier", "datestamp", "setSpec")
SOURCE_KEYS = ("xpath", "path", "value", "header", "first_of", "all_of", "concat", "zip")
PATH_KEY = {"xml": "xpath", "json": "path", "json+xml": "xpath or path"}


def _problem(reason: str) -> PydanticCustomError:
    return PydanticCustomError("rule", "{reason}", {"reason": reason})


def _regex(expr: str) -> str:
    try:
        re.compile(expr)
    except re.error as exc:
        raise _problem(f"bad regex {expr!r}: {exc}") from None
    return expr


def _non_blank(value: str) -> str:
    if not value.strip():
        raise _problem("must be a non-empty string")
    return value


def _one_or_more(value: Any) -> Any:
    """A string or a non-empty list of them (YAML's ``a`` or ``[a, b]``): one value becomes a list of one."""
    return value if isinstance(value, list) else [value]


NonBlank = Annotated[str, AfterValidator(_non_blank)]
Regex = Annotated[str, AfterValidator(_regex)]
Strings = Annotated[list[NonBlank], Field(min_length=1)]
CleanName = Literal[tuple(CLEANERS)]  # type: ignore[valid-type]


class RuleSpec(BaseModel):
    """One field rule (see the module docstring). Validate with :func:`validate_rule`."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    # sources
    xpath: Strings | None = None
    path: Strings | None = None
    value: Strings | None = None
    header: Literal[HEADER_FIELDS] | None = None  # type: ignore[valid-type]
    first_of: Annotated[list[RuleOrList], Field(min_length=1)] | None = None
    all_of: Annotated[list[RuleOrList], Field(min_length=1)] | None = None
    concat: Annotated[list[RuleOrList], Field(min_length=1)] | None = None
    zip: Annotated[list[RuleOrList], Field(min_length=1)] | None = None
    separator: str = ""
    each: NonBlank | None = None
    when: NonBlank | RuleSpec | None = None
    # filters, in the order they apply
    split: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)] | None = None  # delimiters
    clean: Annotated[list[CleanName], Field(min_length=1)] | None = None
    replace: Annotated[dict[Regex, str], Field(min_length=1)] | None = None  # each match -> this literal text
    exclude: Regex | None = None
    exclude_terms: Strings | None = None
    keep_terms: Strings | None = None
    pattern: Regex | None = None
    template: str | None = None
    all_matches: bool = False
    map: Annotated[dict[str, NonBlank], Field(min_length=1)] | None = None
    map_patterns: Annotated[dict[Regex, NonBlank], Field(min_length=1)] | None = None
    lookup: NonBlank | None = None
    unlisted: Literal["drop", "keep"] = "drop"
    join: str | None = None
    unique: bool = False
    index: int | None = None
    first: bool = False
    slice: Annotated[list[int], Field(min_length=2, max_length=2)] | None = None
    default: Strings | None = None
    # sub-properties of structured values (with ``each``)
    inScheme: RuleOrList | None = None
    exactMatch: RuleOrList | None = None
    closeMatch: RuleOrList | None = None
    note: RuleOrList | None = None
    coordinates: RuleOrList | None = None
    city: RuleOrList | None = None
    county: RuleOrList | None = None
    state: RuleOrList | None = None
    country: RuleOrList | None = None
    region: RuleOrList | None = None
    begin: RuleOrList | None = None
    end: RuleOrList | None = None
    description: RuleOrList | None = None

    @model_validator(mode="before")
    @classmethod
    def _lists(cls, data: Any) -> Any:
        """``xpath``/``path``/``value``/``default``/``exclude_terms``/``keep_terms``/``clean``/``split`` take one or
        a list;
        ``map`` keys are compared as text (YAML reads ``yes`` and ``1`` as other types)."""
        if not isinstance(data, dict):
            raise _problem(f"expected a mapping of rule keys, got {data!r}")
        data = {key: value for key, value in data.items() if value is not None}
        for key in ("xpath", "path", "value", "default", "exclude_terms", "keep_terms", "clean", "split"):
            if key in data:
                data[key] = _one_or_more(data[key])
        for key in ("map", "map_patterns", "replace"):
            if isinstance(data.get(key), dict):
                data[key] = {str(k): v for k, v in data[key].items()}
        return data

    @model_validator(mode="after")
    def _coherent(self, info: ValidationInfo) -> RuleSpec:
        context = info.context or {}
        kind, shape = context.get("source"), context.get("shape")
        _check_language(self, kind)
        sources = [key for key in SOURCE_KEYS if getattr(self, key) is not None]
        if len(sources) > 1:
            raise _problem(f"give one source, not {sources}")
        if not sources and self.each is None and self.default is None:
            raise _problem(f"needs a source ({PATH_KEY.get(kind, 'xpath or path')}, value, header, first_of, all_of, "
                           "concat or zip), 'each', or only a 'default'")
        if self.template is not None:
            _check_template(self.pattern, self.template)
        if self.all_matches and self.pattern is None:
            raise _problem("'all_matches' needs a 'pattern'")
        if self.separator and self.concat is None and self.zip is None:
            raise _problem("'separator' goes with 'concat' or 'zip'")
        for keys in (("index", "first", "slice"), ("map", "map_patterns", "lookup")):
            given = [name for name in keys if getattr(self, name) not in (None, False)]
            if len(given) > 1:
                raise _problem(f"give one of {', '.join(keys)}, not {given}")
        _check_sub_properties(self, shape)
        return self

    def sub_properties(self) -> dict[str, RuleSpec | list]:
        return {name: getattr(self, name) for name in _SUB_NAMES if getattr(self, name) is not None}


# a rule or a list of rules: the list is told apart by its type, so an error speaks of the form given
RuleOrList = Annotated[
    Annotated[RuleSpec, Tag("rule")] | Annotated[Annotated[list[RuleSpec], Field(min_length=1)], Tag("list")],
    Discriminator(lambda value: "list" if isinstance(value, list) else "rule"),
]
_SUB_NAMES = ("inScheme", "exactMatch", "closeMatch", "note", "coordinates", "city", "county", "state", "country",
              "region", "begin", "end", "description")
RuleSpec.model_rebuild()


def _check_language(spec: RuleSpec, kind: str | None) -> None:
    if kind == "json+xml" and spec.header is not None:
        raise _problem("a JSON profile's rules have no OAI-PMH 'header'")
    if kind == "json" and (spec.xpath is not None or spec.header is not None):
        raise _problem("a JSON profile's rules take 'path' (JMESPath), not 'xpath' or 'header'")
    if kind == "xml" and spec.path is not None:
        raise _problem("an XML profile's rules take 'xpath', not 'path'")


def _check_template(pattern: str | None, template: str) -> None:
    if pattern is None:
        raise _problem("'template' needs a 'pattern'")
    compiled = re.compile(pattern)
    try:
        template.format(*["x"] * compiled.groups, **{name: "x" for name in compiled.groupindex})
    except (KeyError, IndexError, ValueError) as exc:
        raise _problem(f"'template' {template!r} does not fit the pattern's groups: {exc!r}") from None


def _check_sub_properties(spec: RuleSpec, shape: str | None) -> None:
    given = spec.sub_properties()
    if not given:
        return
    if spec.each is None:
        raise _problem(f"sub-properties {sorted(given)} need 'each' (the items they describe)")
    if shape is None:
        return
    allowed = SUB_PROPERTIES.get(shape, {})
    wrong = sorted(set(given) - set(allowed))
    if wrong:
        raise _problem(f"{wrong}: not sub-properties of a {shape} value (allowed: {sorted(allowed) or 'none'})")


def validate_rule(spec: Any, *, field: str, source: str | None) -> RuleSpec | list[RuleSpec]:
    """``spec`` (a mapping or a non-empty list of them) as checked :class:`RuleSpec`; a ConfigError names the field
    and the dotted key (``mapping rule for 'subject': first_of.1.pattern: bad regex ...``)."""
    shape = FIELDS[field][1] if field in FIELDS else None
    context = {"source": source, "shape": shape}
    if isinstance(spec, list):
        if not spec:
            raise ConfigError(f"mapping rule for {field!r}: an empty list of rules")
        return [_validate_one(item, field, context, prefix=f"{n}.") for n, item in enumerate(spec)]
    return _validate_one(spec, field, context, prefix="")


def _validate_one(spec: Any, field: str, context: dict, prefix: str) -> RuleSpec:
    try:
        return RuleSpec.model_validate(spec, context=context)
    except ValidationError as exc:
        raise ConfigError(f"mapping rule for {field!r}: {describe(exc, prefix)}") from None


def describe(exc: ValidationError, prefix: str = "") -> str:
    """The first problem of ``exc`` as ``<dotted key>: <reason>`` (unknown keys as such, with the allowed ones)."""
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"] if part not in ("rule", "list")]
    key = prefix + ".".join(loc)
    if error["type"] == "extra_forbidden":
        near = difflib.get_close_matches(loc[-1], RuleSpec.model_fields, n=1)
        return f"{key}: unknown key" + (f" (did you mean {near[0]!r}?)" if near else " (see the rule keys in model.py)")
    message = error["msg"].removeprefix("Value error, ")
    return f"{key.rstrip('.')}: {message}" if key.rstrip(".") else message
