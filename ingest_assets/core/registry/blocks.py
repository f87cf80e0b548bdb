"""The base of every registry model (:class:`Block`), the shared types and validators, and the keys every
``harvest:`` block shares (:class:`BaseHarvest`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

MiB = 1024 * 1024


def problem(reason: str) -> PydanticCustomError:
    """A validator's refusal, worded as given (reported like pydantic's own errors)."""
    return PydanticCustomError("config", "{reason}", {"reason": reason})


def _http_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise problem(f"must be an http(s) URL, got {value!r}")
    return value


Text = Annotated[str, Field(min_length=1)]
HttpUrl = Annotated[str, AfterValidator(_http_url)]
Positive = Annotated[int, Field(gt=0)]
Param = Annotated[str | int | float, AfterValidator(str)]  # a query parameter, sent as text


class Block(BaseModel):
    """The base of every registry model: strict types, unknown keys refused, read-only."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def one_as_list(data: Any, one: str, many: str) -> Any:
    """A block's ``one: x`` read as ``many: [x]`` (giving both is refused)."""
    if isinstance(data, dict) and one in data:
        if many in data:
            raise problem(f"give {one} or {many}, not both")
        data = {key: value for key, value in data.items() if key != one} | {many: [data[one]]}
    return data


class BaseHarvest(Block):
    """The keys every ``harvest:`` block shares (each type adds its own)."""

    allow_private: bool = False  # may reach loopback/private addresses
    full: bool = False  # always a full harvest: no date window
    # ``delivery: private``: a shipped hub's block whose source only the hub knows (files sent to DPLA, an endpoint
    # or query kept in ingestion3's private configuration); ``fill_in`` names each placeholder key (dotted below
    # ``harvest``) and what goes there. An operator's registry refuses the entry until both keys are gone.
    delivery: Literal["public", "private"] = "public"
    fill_in: dict[Text, Text] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _placeholders_named(self) -> BaseHarvest:
        if (self.delivery == "private") != bool(self.fill_in):
            raise problem("delivery: private and fill_in (each placeholder key: what goes there) come together")
        for key in self.fill_in:
            node: Any = self
            for part in key.split("."):
                node = node.get(part) if isinstance(node, Mapping) else getattr(node, part, None)
            if node is None:
                raise problem(f"fill_in names {key!r}, which the block does not hold")
        return self

    def placeholder(self) -> tuple[str, str] | None:
        """The first placeholder key and what goes there, for a ``delivery: private`` block."""
        return next(iter(self.fill_in.items()), None)
