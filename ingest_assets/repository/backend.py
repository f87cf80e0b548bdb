"""What both repository backends (Fedora 6, embedded OCFL) offer, and their errors.

Writes happen in a transaction: ``with repo.transaction() as tx: tx.put(obj); tx.delete(pid)``.
Leaving the block normally commits (Fedora: atomically; OCFL: object by object, see
:mod:`~ingest_assets.repository.ocfl`); an exception rolls back (Fedora: ``fcr:tx``; OCFL: nothing
of the buffered work is written). ``delete`` leaves a tombstone and purges it, so the PID can be re-used.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractContextManager

from ingest_assets.core.errors import IngestError
from ingest_assets.repository.model import RepositoryObject


class RepositoryError(IngestError):
    """A repository operation failed."""


class ObjectNotFound(RepositoryError):
    """No object with this PID (HTTP 404)."""


class ObjectGone(RepositoryError):
    """The object was deleted and a tombstone remains (HTTP 410)."""


class Conflict(RepositoryError):
    """The repository refused a change that conflicts with its state or another transaction (409)."""


class PreconditionFailed(RepositoryError):
    """An ``If-Match`` precondition did not hold: the object changed meanwhile (412)."""


class Transaction(ABC):
    @abstractmethod
    def put(self, obj: RepositoryObject) -> None: ...

    @abstractmethod
    def delete(self, pid: str) -> None: ...

    @abstractmethod
    def keep_alive(self) -> None: ...


class Repository(ABC):
    @abstractmethod
    def transaction(self) -> AbstractContextManager[Transaction]: ...

    @abstractmethod
    def get(self, pid: str) -> RepositoryObject: ...

    @abstractmethod
    def exists(self, pid: str) -> bool: ...

