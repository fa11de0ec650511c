"""The board's values that start with what was typed (bounty ids, task ids, repositories), for completions.

A completion is asked for at every keystroke, so it must cost what it returns, not what the board holds: a
range of an index on the lower-cased value (`typed` ≤ value < `typed` + the last code point), a limit, and for
repositories one index seek per distinct value instead of a scan of their rows. PostgreSQL compares in the
database's collation, where a prefix is not a range (en_US sorts 'a-b' between 'ab' and 'ac'), so its indexes
and ranges are in the "C" collation (byte order, as SQLite's default).
"""

from __future__ import annotations

from adapters.sql import SqlDb
from projections.bounties.board import BountyBoard
from projections.versions import ready

COLUMNS = ("bounty_id", "task_id", "repo")
LAST = chr(0x10FFFF)  # above every other code point: typed + LAST bounds every value that starts with typed


def _key(column: str, postgres: bool) -> str:
    return f'(lower({column}) COLLATE "C")' if postgres else f"lower({column})"


def _indexes(postgres: bool) -> str:
    return ";\n".join(f"CREATE INDEX IF NOT EXISTS bounty_board_prefix_{c} ON bounty_board ({_key(c, postgres)})"
                      for c in COLUMNS)


def starting_with(views: SqlDb, column: str, typed: str, limit: int) -> list[str]:
    """Up to `limit` distinct values of `column` that start with `typed` (case-insensitively), in order."""
    if column not in COLUMNS:
        raise ValueError(f"no prefix lookup on {column!r}")
    ready(views, BountyBoard)
    views.ensure(_indexes(views.postgres))
    key, low = _key(column, views.postgres), typed.lower()
    select = f"SELECT {column}, lower({column}) FROM bounty_board WHERE {column} IS NOT NULL AND {key} < ?"
    if column != "repo":  # one row per bounty: a single range read
        rows = views.query(f"{select} AND {key} >= ? ORDER BY {key} LIMIT ?", (low + LAST, low, limit))
        return [row[0] for row in rows]
    found: list[str] = []
    after: str | None = None
    while len(found) < limit:  # a repository has many rows: one seek per distinct value, its rows not read
        bound = f"{key} > ?" if after is not None else f"{key} >= ?"
        rows = views.query(f"{select} AND {bound} ORDER BY {key} LIMIT 1",
                           (low + LAST, after if after is not None else low))
        if not rows:
            break
        found.append(rows[0][0])
        after = rows[0][1]
    return found
