"""The bounty board: every bounty with amount (and its human value), asset, repo, mode, state and workers.

It is what `accept_best_task` selects from, what the web page pages through (`query`, `count`, `totals`:
filters, order and page in SQL on indexes, never in Python) and what `code3 audit verify` rebuilds from
scratch. A pure projector (projections/runner.py): any process catches it up with `follow` before reading.
Version 2 added `mode` (exclusive or contest, from `Bounty.Created`): a board of version 1 is rebuilt from
the log by itself at the first catch-up. Version 4 follows the v2 contract: the pool beside the published amount,
the bounty's resolver and repository id, live and closed submissions, an open dispute, and the identity links.
"""

from __future__ import annotations

import json
from typing import Any

from adapters.sql import Cursor, SqlDb
from domain.bounties.amounts import display
from domain.bounties.bounty import Bounty
from domain.bounties.contract import (
    REFUND_GRACE,
    Mode,
    Rejection,
    Status,
    mirror_view,
    status_after_accept,
    status_after_withdraw,
)
from domain.bounties.identity_link import AccountLink
from domain.bounties.issue import Issue
from domain.errors import Code, Code3Error
from projections.versions import ready

SCHEMA = """
CREATE TABLE IF NOT EXISTS bounty_board (bounty_id TEXT PRIMARY KEY, repo TEXT NOT NULL, issue_hash TEXT NOT NULL,
    task_id TEXT, amount BIGINT NOT NULL, asset TEXT NOT NULL, state TEXT NOT NULL, workers TEXT NOT NULL,
    winner TEXT, cooling_until BIGINT, effort INTEGER NOT NULL DEFAULT 1, sponsor TEXT NOT NULL,
    claimable INTEGER NOT NULL DEFAULT 0, deadline BIGINT, mode TEXT NOT NULL DEFAULT 'contest', holder TEXT,
    hold_until BIGINT, pool BIGINT NOT NULL DEFAULT 0, entrants INTEGER NOT NULL DEFAULT 0, disputed_by TEXT,
    rule_by BIGINT, resolver TEXT, repo_id BIGINT NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS board_prs (bounty_id TEXT NOT NULL, worker TEXT NOT NULL, pr_url TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'live', PRIMARY KEY (bounty_id, worker));
CREATE INDEX IF NOT EXISTS board_prs_by_url ON board_prs (pr_url, state);
CREATE TABLE IF NOT EXISTS board_links (originator_id TEXT PRIMARY KEY, resolver TEXT NOT NULL,
    forge_user_id BIGINT NOT NULL, login TEXT NOT NULL, account TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS board_links_by_account ON board_links (account);
CREATE TABLE IF NOT EXISTS board_issues (issue_hash TEXT PRIMARY KEY, task_id TEXT, effort INTEGER NOT NULL,
    deadline BIGINT);
CREATE TABLE IF NOT EXISTS board_originators (originator_id TEXT PRIMARY KEY, issue_hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS board_bounty_ids (originator_id TEXT PRIMARY KEY, bounty_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS board_unfunded (issue_hash TEXT PRIMARY KEY, task_id TEXT, url TEXT, amount BIGINT NOT NULL,
    asset TEXT NOT NULL, reason TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS bounty_board_issue ON bounty_board (issue_hash);
CREATE INDEX IF NOT EXISTS bounty_board_state_amount ON bounty_board (state, amount);
CREATE INDEX IF NOT EXISTS bounty_board_state_id ON bounty_board (state, bounty_id);
CREATE INDEX IF NOT EXISTS bounty_board_state_deadline ON bounty_board (state, deadline);
CREATE INDEX IF NOT EXISTS bounty_board_state_cooling ON bounty_board (state, cooling_until);
CREATE INDEX IF NOT EXISTS bounty_board_state_per_effort ON bounty_board
    (state, (amount * 1.0 / (CASE WHEN effort > 1 THEN effort ELSE 1 END)));
CREATE INDEX IF NOT EXISTS bounty_board_repo ON bounty_board (repo, state);
CREATE INDEX IF NOT EXISTS bounty_board_asset ON bounty_board (asset, state);
CREATE INDEX IF NOT EXISTS bounty_board_mode ON bounty_board (mode, state, bounty_id);
CREATE INDEX IF NOT EXISTS bounty_board_newest ON bounty_board ((CAST(bounty_id AS BIGINT)));
CREATE INDEX IF NOT EXISTS bounty_board_state_newest ON bounty_board (state, (CAST(bounty_id AS BIGINT)));
CREATE INDEX IF NOT EXISTS bounty_board_amount_order ON bounty_board (amount DESC, bounty_id);
CREATE INDEX IF NOT EXISTS bounty_board_deadline_order ON bounty_board
    ((CASE WHEN deadline IS NULL THEN 1 ELSE 0 END), deadline, bounty_id);
CREATE INDEX IF NOT EXISTS bounty_board_state_deadline_order ON bounty_board
    (state, (CASE WHEN deadline IS NULL THEN 1 ELSE 0 END), deadline, bounty_id);
CREATE INDEX IF NOT EXISTS bounty_board_repo_newest ON bounty_board (repo, (CAST(bounty_id AS BIGINT)));
CREATE INDEX IF NOT EXISTS bounty_board_asset_newest ON bounty_board (asset, (CAST(bounty_id AS BIGINT)));
CREATE INDEX IF NOT EXISTS bounty_board_mode_newest ON bounty_board (mode, (CAST(bounty_id AS BIGINT)));
"""  # from bounty_board_newest on: the web board's pages follow an index in each order (ORDERS), unfiltered or by
# state, and newest first by repository, asset or mode, at any size
COLUMNS = ("bounty_id, repo, issue_hash, task_id, amount, asset, state, workers, winner, cooling_until, effort, "
           "sponsor, claimable, deadline, mode, pool, disputed_by, rule_by, resolver, repo_id")
TABLES = ("bounty_board", "board_issues", "board_originators", "board_bounty_ids", "board_prs", "board_links",
          "board_unfunded")


class BountyBoard:
    name = "bounty_board"
    version = 5  # 2: the bounty's mode; a withdrawal and an exclusive task's new holder change the workers
    # 3: the exclusive hold (holder, hold_until) and each worker's submitted PR (board_prs), so the worker compares a
    # bounty with the chain and looks its PRs up on the forge without loading the aggregate (`mirror_rows`)
    # 4: the v2 contract (pool, entrants, resolver, repository id, dispute, live/closed submissions, links)
    # 5: unfunded issues (board_unfunded): opened on the forge, their bounty refused by the chain
    has_effects = False
    schema = SCHEMA
    tables = TABLES

    def effect(self, event: Any) -> None:
        return None

    def apply(self, event: Any, cur: Cursor) -> None:
        if isinstance(event, Issue.PublishRequested):
            _issue_info(cur, event.issue_hash, effort=event.effort, deadline=event.deadline)
        elif isinstance(event, Issue.Opened):
            key = _issue_hash_of(cur, event.originator_id)
            if key:
                _issue_info(cur, key, task_id=event.task_id)
                cur.execute("UPDATE bounty_board SET task_id = ? WHERE issue_hash = ?", (event.task_id, key))
        elif isinstance(event, Issue.Unfunded):
            key = _issue_hash_of(cur, event.originator_id)
            if key:
                cur.execute("INSERT INTO board_unfunded (issue_hash, task_id, url, amount, asset, reason) "
                            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (issue_hash) DO NOTHING",
                            (key, event.task_id, event.url, event.amount, event.asset, event.reason))
        elif isinstance(event, Issue.Superseded | Issue.BountyLinked):  # taken over, or funded after all
            cur.execute("DELETE FROM board_unfunded WHERE issue_hash = (SELECT issue_hash FROM board_originators "
                        "WHERE originator_id = ?)", (str(event.originator_id),))
        elif isinstance(event, Bounty.Created):
            cur.execute("SELECT task_id, effort, deadline FROM board_issues WHERE issue_hash = ?",
                        (event.issue_hash,))
            info = cur.fetchone() or (None, 1, None)
            cur.execute(f"INSERT INTO bounty_board ({COLUMNS}) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, '[]', NULL, NULL, ?, ?, 0, ?, ?, ?, NULL, NULL, ?, ?) "
                        "ON CONFLICT (bounty_id) DO NOTHING",
                        (event.bounty_id, event.repo, event.issue_hash, info[0], event.amount, event.asset,
                         Status.OPEN.name, info[1], event.sponsor,
                         event.deadline if event.deadline is not None else info[2],  # the chain's deadline first
                         event.mode, event.amount, event.resolver, event.repo_id))
            _bounty_ids(cur, event.originator_id, event.bounty_id)
        elif isinstance(event, Bounty.Event):
            self._bounty_event(event, cur)
        elif isinstance(event, AccountLink.Linked | AccountLink.Relinked):
            self._link(event, cur)

    def _link(self, event: Any, cur: Cursor) -> None:
        if isinstance(event, AccountLink.Linked):
            cur.execute("INSERT INTO board_links (originator_id, resolver, forge_user_id, login, account) "
                        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (originator_id) DO NOTHING",
                        (str(event.originator_id), event.resolver, event.forge_user_id, event.login, event.account))
        else:
            cur.execute("UPDATE board_links SET login = ?, account = ? WHERE originator_id = ?",
                        (event.login, event.account, str(event.originator_id)))

    def _bounty_event(self, event: Any, cur: Cursor) -> None:
        """One statement for most events (the row found through board_bounty_ids inside the UPDATE), two where
        the new value depends on the row (accept, withdraw, a rejection): each is a round trip under the page's
        lock."""
        originator = str(event.originator_id)
        if isinstance(event, Bounty.Accepted | Bounty.Withdrawn):
            row = cur.execute("SELECT b.bounty_id, b.state, b.workers, b.mode, b.holder, b.hold_until, b.entrants "
                              "FROM board_bounty_ids i JOIN bounty_board b ON b.bounty_id = i.bounty_id "
                              "WHERE i.originator_id = ?", (originator,)).fetchone()
            if row is None:
                return
            bounty_id, state, workers_json, mode, holder, hold_until, entrants = row
            workers = json.loads(workers_json)
            if isinstance(event, Bounty.Accepted):  # as the chain: an exclusive task's new holder replaces the last
                if mode == Mode.EXCLUSIVE.label:
                    workers, holder, hold_until, entrants = [event.worker], event.worker, event.hold_until, 1
                else:
                    workers, entrants = [*workers, event.worker], entrants + 1
                state = status_after_accept(Status[state]).name
            else:
                if event.worker in workers:
                    workers.remove(event.worker)
                if holder == event.worker:
                    holder, hold_until = None, None
                entrants = max(0, entrants - 1)
                state = status_after_withdraw(Status[state], entrants).name
            cur.execute("UPDATE bounty_board SET workers = ?, state = ?, holder = ?, hold_until = ?, entrants = ? "
                        "WHERE bounty_id = ?", (json.dumps(workers), state, holder, hold_until, entrants, bounty_id))
            return
        updates: dict[str, Any] = {}
        row_id = "(SELECT bounty_id FROM board_bounty_ids WHERE originator_id = ?)"
        if isinstance(event, Bounty.PRSubmitted):
            updates["state"] = Status.PR_SUBMITTED.name
            cur.execute("INSERT INTO board_prs (bounty_id, worker, pr_url, state) "
                        "SELECT bounty_id, ?, ?, 'live' FROM board_bounty_ids WHERE originator_id = ? "
                        "ON CONFLICT (bounty_id, worker) DO UPDATE SET pr_url = excluded.pr_url, state = 'live'",
                        (event.worker, event.pr_url, originator))
        elif isinstance(event, Bounty.SubmissionRejected):
            if event.reason == Rejection.CLOSED:
                cur.execute(f"UPDATE board_prs SET state = 'closed' WHERE worker = ? AND bounty_id = {row_id}",
                            (event.worker, originator))
            else:
                cur.execute(f"DELETE FROM board_prs WHERE worker = ? AND bounty_id = {row_id}",
                            (event.worker, originator))
            left = cur.execute(f"SELECT COUNT(*) FROM board_prs WHERE state = 'live' AND bounty_id = {row_id}",
                               (originator,)).fetchone()[0]
            if not left:
                updates["state"] = Status.STARTED.name
        elif isinstance(event, Bounty.Funded):
            updates["pool"] = event.pool
        elif isinstance(event, Bounty.Merged):
            updates.update(state=Status.MERGED.name, winner=event.winner, disputed_by=None, rule_by=None)
        elif isinstance(event, Bounty.CoolingStarted):
            updates.update(state=Status.COOLING_DOWN.name, cooling_until=event.cooling_until)
        elif isinstance(event, Bounty.DisputeOpened):
            updates.update(disputed_by=event.by, rule_by=event.rule_by)
        elif isinstance(event, Bounty.DisputeRuled):
            updates.update(disputed_by=None, rule_by=None)
        elif isinstance(event, Bounty.Paid):
            updates.update(state=Status.PAID.name, claimable=0, disputed_by=None, rule_by=None)
        elif isinstance(event, Bounty.BecameClaimable):
            updates["claimable"] = 1
        elif isinstance(event, Bounty.Cancelled):
            cur.execute(f"UPDATE bounty_board SET state = ? WHERE state <> ? AND bounty_id = {row_id}",
                        (Status.CANCELLED.name, Status.PAID.name, originator))
            updates.update(disputed_by=None, rule_by=None)
        elif isinstance(event, Bounty.Reconciled):
            updates.update(self._reconciled(event.chain, cur, originator))
        if updates:
            assignments = ", ".join(f"{column} = ?" for column in updates)
            cur.execute(f"UPDATE bounty_board SET {assignments} WHERE bounty_id = {row_id}",
                        (*updates.values(), originator))

    @staticmethod
    def _reconciled(chain: dict[str, Any], cur: Cursor, originator: str) -> dict[str, Any]:
        """The chain's side adopted, as Bounty._reconciled does (a v1 mirror's record names the workers)."""
        updates = {"state": Status(chain["status"]).name, "winner": chain["winner"],
                   "cooling_until": chain["cooling_until"], "holder": chain.get("holder"),
                   "hold_until": chain.get("hold_until")}
        if "workers" in chain:
            updates.update(workers=json.dumps(chain["workers"]), entrants=len(chain["workers"]))
            return updates
        live = set(chain["live"])
        rows_ = cur.execute("SELECT worker FROM board_prs WHERE bounty_id = (SELECT bounty_id FROM board_bounty_ids "
                            "WHERE originator_id = ?)", (originator,)).fetchall()
        for (worker,) in rows_:
            cur.execute("UPDATE board_prs SET state = ? WHERE worker = ? AND bounty_id = (SELECT bounty_id FROM "
                        "board_bounty_ids WHERE originator_id = ?)", ("live" if worker in live else "closed", worker,
                                                                      originator))
        updates.update(entrants=chain["entrants"], pool=chain["pool"], disputed_by=chain["disputed_by"])
        if chain["disputed_by"] is None:
            updates["rule_by"] = None
        return updates


def _issue_info(cur: Cursor, issue_hash: str, task_id: str | None = None, effort: int | None = None,
                deadline: int | None = None) -> None:
    cur.execute("INSERT INTO board_issues (issue_hash, task_id, effort, deadline) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (issue_hash) DO UPDATE SET task_id = COALESCE(excluded.task_id, board_issues.task_id), "
                "effort = COALESCE(?, board_issues.effort), deadline = COALESCE(?, board_issues.deadline)",
                (issue_hash, task_id, effort or 1, deadline, effort, deadline))
    if effort is not None:
        cur.execute("INSERT INTO board_originators (originator_id, issue_hash) VALUES (?, ?) "
                    "ON CONFLICT (originator_id) DO NOTHING", (str(Issue.create_id(issue_hash)), issue_hash))


def _issue_hash_of(cur: Cursor, originator_id: Any) -> str | None:
    cur.execute("SELECT issue_hash FROM board_originators WHERE originator_id = ?", (str(originator_id),))
    row = cur.fetchone()
    return row[0] if row else None


def _bounty_ids(cur: Cursor, originator_id: Any, bounty_id: str) -> None:
    cur.execute("INSERT INTO board_bounty_ids (originator_id, bounty_id) VALUES (?, ?) "
                "ON CONFLICT (originator_id) DO NOTHING", (str(originator_id), bounty_id))


LIVE = (Status.OPEN.name, Status.STARTED.name, Status.PR_SUBMITTED.name, Status.MERGED.name,
        Status.COOLING_DOWN.name)  # what can still change; PAID and CANCELLED are final
MAX_BIGINT = 2**63 - 1
PER_EFFORT = "amount * 1.0 / (CASE WHEN effort > 1 THEN effort ELSE 1 END)"  # as bounty_board_state_per_effort


def rows(views: SqlDb, where: str = "", params: tuple[Any, ...] = (), order: str = "bounty_id",
         limit: int | None = None, offset: int = 0, source: str = "bounty_board") -> list[dict[str, Any]]:
    """Board rows; the filter, the order and the page are the database's work (indexed), never Python's."""
    ready(views, BountyBoard)
    page = " LIMIT ? OFFSET ?" if limit is not None else ""
    found = views.query(f"SELECT {COLUMNS} FROM {source} {where} ORDER BY {order}{page}",
                        (*params, limit, offset) if limit is not None else params)
    names = [c.strip() for c in COLUMNS.split(",")]
    result = []
    for row in found:
        item = dict(zip(names, row, strict=True))
        item["workers"] = json.loads(item["workers"])
        item["amount_display"] = display(item["amount"], item["asset"])  # for people, beside the smallest unit
        result.append(item)
    return result


MODES = tuple(m.label for m in Mode)  # "exclusive", "contest"
# the orders a page may ask for; each is served by an index whose leading columns are the usual filters
ORDERS = {
    "bounty_id": "bounty_id",  # the default: stable, and what `after` pages by
    "newest": "CAST(bounty_id AS BIGINT) DESC",  # chain ids grow: the latest bounties first
    "amount": "amount DESC, bounty_id",  # the largest first
    "deadline": "CASE WHEN deadline IS NULL THEN 1 ELSE 0 END, deadline, bounty_id",  # the soonest first
}


def query(views: SqlDb, states: tuple[str, ...] = (), repo: str | None = None, asset: str | None = None,
          mode: str | None = None, min_amount: int = 0, order: str = "bounty_id", limit: int | None = None,
          offset: int = 0, after: str | None = None) -> list[dict[str, Any]]:
    """Board rows filtered by state (any of `states`), repository, asset, mode and smallest amount, in `order`
    (one of ORDERS), one page (`limit` rows after `offset`, or, in bounty-id order, after the bounty id `after`).
    An unknown order or mode, or a negative limit or offset, is E_VALIDATION."""
    if order not in ORDERS:
        raise Code3Error(Code.VALIDATION, f"unknown board order {order!r}", f"use one of {', '.join(ORDERS)}")
    if (limit is not None and limit < 0) or offset < 0:
        raise Code3Error(Code.VALIDATION, "limit and offset must not be negative", "pass 0 or more")
    if after is not None and order != "bounty_id":
        raise Code3Error(Code.VALIDATION, "`after` pages in bounty-id order only", "use offset with this order")
    if min_amount > MAX_BIGINT:
        return []
    where, params = _filters(states, repo, asset, min_amount, mode)
    if after is not None:
        where.append("bounty_id > ?")
        params.append(after)
    return rows(views, ("WHERE " + " AND ".join(where)) if where else "", tuple(params), order=ORDERS[order],
                limit=limit, offset=offset)


def count(views: SqlDb, states: tuple[str, ...] = (), repo: str | None = None, asset: str | None = None,
          mode: str | None = None, min_amount: int = 0) -> int:
    """How many rows `query` with the same filters would page through (counted by the database)."""
    if min_amount > MAX_BIGINT:
        return 0
    where, params = _filters(states, repo, asset, min_amount, mode)
    ready(views, BountyBoard)
    [(found,)] = views.query(f"SELECT COUNT(*) FROM bounty_board {('WHERE ' + ' AND '.join(where)) if where else ''}",
                             tuple(params))
    return int(found)


def totals(views: SqlDb) -> dict[str, dict[str, int]]:
    """Per asset, in its smallest unit: `escrowed` (the pools of live bounties), `paid` and `refunded` (cancelled),
    summed in SQL; assets with no bounty are absent (a ruling that pays part and refunds the rest counts as paid)."""
    ready(views, BountyBoard)
    live = ", ".join("?" for _ in LIVE)
    found = views.query(
        f"SELECT asset, SUM(CASE WHEN state IN ({live}) THEN pool ELSE 0 END), "
        "SUM(CASE WHEN state = ? THEN pool ELSE 0 END), SUM(CASE WHEN state = ? THEN pool ELSE 0 END) "
        "FROM bounty_board GROUP BY asset ORDER BY asset", (*LIVE, Status.PAID.name, Status.CANCELLED.name))
    return {str(asset): {"escrowed": int(escrowed or 0), "paid": int(paid or 0), "refunded": int(refunded or 0)}
            for asset, escrowed, paid, refunded in found}


def best_open(views: SqlDb, min_amount: int, exclude_sponsor: str, per_effort: bool, limit: int, offset: int = 0
              ) -> list[dict[str, Any]]:
    """Open and started bounties with a task, not sponsored by `exclude_sponsor`, best first (the largest amount,
    or amount per unit of effort; ties: the oldest bounty): one page, ranked by the database."""
    if min_amount > MAX_BIGINT:
        return []
    where, params = _filters((), None, None, min_amount)
    where += ["state = ?", "task_id IS NOT NULL", "sponsor <> ?"]
    score = PER_EFFORT if per_effort else "amount"
    # one ranked, limited read per state, so the largest amounts come from the (state, amount) index
    best = (f"SELECT {COLUMNS}, {score} AS rank_score, CAST(bounty_id AS BIGINT) AS rank_id FROM bounty_board "
            f"WHERE {' AND '.join(where)} ORDER BY {score} DESC, CAST(bounty_id AS BIGINT) ASC LIMIT ?")
    states = (Status.OPEN.name, Status.STARTED.name)
    source = " UNION ALL ".join(f"SELECT * FROM ({best}) AS s{k}" for k in range(len(states)))
    return rows(views, "", tuple(x for state in states for x in (*params, state, exclude_sponsor, limit + offset)),
                order="rank_score DESC, rank_id ASC", limit=limit, offset=offset, source=f"({source}) AS ranked")


def _filters(states: tuple[str, ...], repo: str | None, asset: str | None, min_amount: int, mode: str | None = None
             ) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    if mode is not None:
        if mode not in MODES:
            raise Code3Error(Code.VALIDATION, f"unknown bounty mode {mode!r}", f"use one of {', '.join(MODES)}")
        where.append("mode = ?")
        params.append(mode)
    if states:
        where.append(f"state IN ({', '.join('?' for _ in states)})")
        params += states
    if repo is not None:
        where.append("repo = ?")
        params.append(repo)
    if asset is not None:
        where.append("asset = ?")
        params.append(asset)
    if min_amount > 0:
        where.append("amount >= ?")
        params.append(min_amount)
    return where, params


def unfunded(views: SqlDb) -> list[dict[str, Any]]:
    """Issues opened on the forge whose bounty the chain refused and no corrected publish took over: they announce
    an amount nothing escrows (their state label is `unfunded`)."""
    ready(views, BountyBoard)
    found = views.query("SELECT issue_hash, task_id, url, amount, asset, reason FROM board_unfunded "
                        "ORDER BY task_id, issue_hash")
    return [{"issue_hash": h, "task_id": t, "url": u, "amount": int(a), "asset": asset,
             "amount_display": display(a, asset), "reason": r} for h, t, u, a, asset, r in found]


def open_bounties(views: SqlDb) -> list[dict[str, Any]]:
    return rows(views, "WHERE state IN (?, ?)", (Status.OPEN.name, Status.STARTED.name))


def mirror_rows(views: SqlDb, state: str, limit: int, after: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """(bounty id, the mirror's side of what the chain also holds, as `Bounty.comparable`) of one page of the
    bounties in `state`, in bounty-id order after `after`: what the worker compares with the chain each round
    without loading an aggregate (the board follows the same events the aggregate does)."""
    ready(views, BountyBoard)
    page = " AND bounty_id > ?" if after is not None else ""
    found = views.query("SELECT bounty_id, state, entrants, winner, cooling_until, holder, hold_until, disputed_by, "
                        f"pool FROM bounty_board WHERE state = ?{page} ORDER BY bounty_id LIMIT ?",
                        (state, after, limit) if after is not None else (state, limit))
    live = live_submissions(views, [str(row[0]) for row in found])
    return [(str(bounty_id), mirror_view(Status[status], entrants, winner, until, holder, hold_until,
                                         [worker for worker, _ in live.get(str(bounty_id), [])], disputed_by, pool))
            for bounty_id, status, entrants, winner, until, holder, hold_until, disputed_by, pool in found]


def submitted_prs(views: SqlDb, bounty_ids: list[str]) -> dict[str, list[str]]:
    """The PR URLs live for each of `bounty_ids` (one per worker), read in one query."""
    return {bounty_id: [url for _, url in subs] for bounty_id, subs in live_submissions(views, bounty_ids).items()}


def live_submissions(views: SqlDb, bounty_ids: list[str]) -> dict[str, list[tuple[str, str]]]:
    """(worker, PR URL) of each live submission of `bounty_ids`, read in one query."""
    if not bounty_ids:
        return {}
    ready(views, BountyBoard)
    found = views.query(f"SELECT bounty_id, worker, pr_url FROM board_prs WHERE state = 'live' AND bounty_id IN "
                        f"({', '.join('?' for _ in bounty_ids)}) ORDER BY bounty_id, worker", tuple(bounty_ids))
    subs: dict[str, list[tuple[str, str]]] = {}
    for bounty_id, worker, pr_url in found:
        subs.setdefault(str(bounty_id), []).append((str(worker), str(pr_url)))
    return subs


def bounties_with_pr(views: SqlDb, pr_url: str) -> list[str]:
    """The bounties with a live submission of this PR URL (several may name one PR; one merge settles one)."""
    ready(views, BountyBoard)
    found = views.query("SELECT DISTINCT bounty_id FROM board_prs WHERE pr_url = ? AND state = 'live' "
                        "ORDER BY bounty_id", (pr_url,))
    return sorted((str(row[0]) for row in found), key=lambda b: (len(b), b))


def links(views: SqlDb, account: str | None = None, limit: int | None = None, offset: int = 0
          ) -> list[dict[str, Any]]:
    """The identity links the chain recorded (all, or those of one address; a page of `limit` after `offset`), for
    the board and the web page."""
    ready(views, BountyBoard)
    where, params = ("WHERE account = ?", (account,)) if account else ("", ())
    page, more = (" LIMIT ? OFFSET ?", (limit, offset)) if limit is not None else ("", ())
    found = views.query(f"SELECT resolver, forge_user_id, login, account FROM board_links {where} "
                        f"ORDER BY login, resolver, forge_user_id{page}", (*params, *more))
    return [{"resolver": r, "forge_user_id": int(f), "login": login, "account": a} for r, f, login, a in found]


def links_count(views: SqlDb) -> int:
    ready(views, BountyBoard)
    [(found,)] = views.query("SELECT COUNT(*) FROM board_links")
    return int(found)


def expired_bounties(views: SqlDb, now: int) -> list[dict[str, Any]]:
    """Bounties past their deadline with nothing merged: without a live PR the sponsor's refund is due now (the
    contract may still hold it for a worker's dispute or a PR closed lately); with one, once the resolver has seen
    it closed, or at the deadline's grace at the latest (no worker freezes escrow)."""
    return rows(views, "WHERE ((state IN (?, ?) AND deadline <= ?) OR (state = ? AND deadline <= ?)) "
                "AND deadline IS NOT NULL", (Status.OPEN.name, Status.STARTED.name, now, Status.PR_SUBMITTED.name,
                                             now - REFUND_GRACE))


def cooling_bounties(views: SqlDb, due_by: int | None = None) -> list[dict[str, Any]]:
    """Cooling bounties; with `due_by`, only those whose cooling period (and any dispute's time) ended by then."""
    if due_by is None:
        return rows(views, "WHERE state = ?", (Status.COOLING_DOWN.name,))
    return rows(views, "WHERE state = ? AND cooling_until IS NOT NULL AND cooling_until <= ? "
                "AND (rule_by IS NULL OR rule_by <= ?)", (Status.COOLING_DOWN.name, due_by, due_by))
