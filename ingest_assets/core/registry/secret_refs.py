"""Secrets a registry block names but never holds (:class:`SecretRef`), and the parameter and header types that
may be one; :mod:`ingest_assets.core.secrets` reads the values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, ValidationError, model_validator

from ingest_assets.core.registry.blocks import Block, Param, Text, problem

ENV_NAME_RE = r"^[A-Za-z_][A-Za-z0-9_]*$"


class SecretRef(Block):
    """A secret the registry names but never holds: ``{env: NAME}`` (an environment variable) or
    ``{file: /run/secrets/name}`` (an absolute path; its content, surrounding whitespace dropped). The value is
    read when the harvest starts (:mod:`ingest_assets.core.secrets`) and redacted from everything written."""

    env: Annotated[str, Field(pattern=ENV_NAME_RE)] | None = None
    file: Text | None = None

    @model_validator(mode="after")
    def _one_source(self) -> SecretRef:
        if (self.env is None) == (self.file is None):
            raise problem("a secret is {env: NAME} or {file: /path}, one of them")
        if self.file is not None and not self.file.startswith("/"):
            raise problem(f"a secrets file is an absolute path, got {self.file!r}")
        return self


def _secret_or_value(value: Any) -> Any:
    """A mapping is a :class:`SecretRef` (its own clear error when it is not one); anything else stays a value."""
    if not isinstance(value, Mapping):
        return value
    if len(value) != 1 or not set(value) <= {"env", "file"}:
        raise problem(f"a secret is {{env: NAME}} or {{file: /path}} (given keys {sorted(map(str, value))})")
    try:
        return SecretRef(**value)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(map(str, error["loc"]))
        raise problem(f"{where + ': ' if where else ''}{error['msg']}") from None


ParamValue = Param | list[Param]  # a list: the parameter repeated (Primo's query_exc)
SecretParam = Annotated[ParamValue | SecretRef, BeforeValidator(_secret_or_value)]
SecretHeader = Annotated[Text | SecretRef, BeforeValidator(_secret_or_value)]
