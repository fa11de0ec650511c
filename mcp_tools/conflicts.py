"""Lost write races, told apart from bugs: concurrent calls of a serve that changed the same records answer a coded
error the client can act on (retry), never E_INTERNAL. Every front and every family's error decorator asks here
before it reports an unexpected exception."""

from __future__ import annotations

from domain.errors import Code, Code3Error


def write_conflict(exc: BaseException) -> Code3Error | None:
    """The coded error (E_PRECONDITION, retry) for a write that lost a race with a concurrent call and whose
    retries were spent: the event store's optimistic concurrency (eventsourcing's IntegrityError on a stale
    aggregate), a PostgreSQL serialization failure or deadlock (SQLSTATE 40001, 40P01), SQLite still locked
    after its busy timeout or the library's SQLite writer still taken after its 5 s wait. None for any other
    exception (an E_INTERNAL, logged)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:  # libraries wrap the driver's error (`from`)
        seen.add(id(current))
        name = type(current).__name__
        state = getattr(current, "sqlstate", None)
        locked = name == "OperationalError" and "database is locked" in str(current)
        library = type(current).__module__.startswith("eventsourcing")
        if (name == "IntegrityError" and library) or state in ("40001", "40P01") or locked:
            return Code3Error(Code.PRECONDITION, "another call changed the same records at the same moment",
                              "retry the call: it resumes where this one stopped")
        if name == "ConnectionUnavailableError" and library:  # SQLite: its one writer stayed busy past the wait
            return Code3Error(Code.PRECONDITION, "the event store was busy with other calls' writes",
                              "retry the call in a moment: it resumes where this one stopped")
        current = current.__cause__
    return None
