"""`code3 doctor`: which forge, chain and store are in use, and whether each one answers.

Every check runs even when an earlier one failed, so one run shows everything to fix. Secrets are
reported as set or not set, never shown.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from code3.settings import Settings


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    hint: str = ""


def _run(name: str, probe: Callable[[], str]) -> Check:
    from domain.errors import Code3Error

    try:
        return Check(name, True, probe())
    except Code3Error as exc:
        return Check(name, False, f"{exc.code.value}: {exc.message}", exc.hint)
    except Exception as exc:  # a doctor reports, it does not crash
        return Check(name, False, f"{type(exc).__name__}: {exc}", "see the message; rerun with --log-level DEBUG")


def git_object(path: Path, st: os.stat_result) -> bool:
    """Git's own object store, as git writes it with the pusher's umask (a `git push` by hand into a forge
    repository): read-only object and pack files (0444, 0555) and directories nobody else may write (0755)
    under a git directory's `objects/`. They hold the project's code, no key or secret; anything else stays
    reported."""
    parts = path.parts
    if "objects" not in parts:
        return False
    git_dir = Path(*parts[: len(parts) - parts[::-1].index("objects") - 1])
    if not ((git_dir / "HEAD").is_file() and (git_dir / "refs").is_dir()):
        return False
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISDIR(st.st_mode):
        return not mode & 0o022
    return stat.S_ISREG(st.st_mode) and not mode & 0o222


def diagnose(settings: Settings) -> list[Check]:
    from adapters.event_store import open_store
    from adapters.keystore import Keystore
    from code3 import wiring
    from domain.errors import Code, Code3Error, present

    checks: list[Check] = []
    signer: Any = None

    def identity() -> str:
        nonlocal signer
        signer = Keystore(settings.keystore_dir).load(settings.identity)
        return f"{signer.name} {signer.address} (keystore {settings.keystore_dir})"

    def database() -> str:
        if not settings.database_url:
            return f"SQLite {settings.state_dir / 'events.sqlite'}"
        import psycopg

        from adapters.pg_pool import CONNECT_TIMEOUT_S, PostgresUrl, application_name

        url = PostgresUrl.parse(settings.database_url)
        try:
            with psycopg.connect(url.dsn, connect_timeout=CONNECT_TIMEOUT_S, application_name=application_name()) as c:
                version = present(c.execute("SHOW server_version").fetchone(), "SHOW server_version's row")[0]
        except psycopg.Error as exc:
            raise Code3Error(Code.PRECONDITION, f"the database at {url.host}:{url.port}/{url.dbname} is unreachable "
                             f"({type(exc).__name__})", "start PostgreSQL or fix CODE3_DATABASE_URL; meanwhile serves "
                             "answer /readyz 503 and serves and workers exit after CODE3_DB_OUTAGE_EXIT") from None
        return f"PostgreSQL {version} at {url.host}:{url.port}/{url.dbname} answers"

    def store() -> str:
        app = open_store(settings.project, settings.database_url)
        try:
            where = "PostgreSQL" if settings.database_url else f"SQLite {settings.state_dir / 'events.sqlite'}"
            return f"{where}: {app.recorder.max_notification_id() or 0} events"
        finally:
            app.close()

    def forge() -> str:
        port = wiring.forge(settings, settings.identity)
        try:
            where = settings.github_api_url if settings.forge == "github" else str(settings.state_dir / "forge")
            token = "" if settings.forge == "local" else ", token set"
            return f"{settings.forge} at {where}{token}; acting as {port.actor}"
        finally:
            getattr(port, "close", lambda: None)()

    def chain() -> str:
        port = wiring.chain(settings)
        try:
            where = settings.aptos_node_url if settings.chain == "aptos" else str(settings.state_dir / "ledger.sqlite")
            detail = f"{settings.chain} ({port.network}) at {where}; ledger time {port.now()}; " \
                     f"{len(port.list_bounties())} bounties"
            if signer is not None:
                detail += f"; {settings.asset} balance of {signer.name}: {port.balance(signer.address, settings.asset)}"
            return detail
        finally:
            getattr(port, "close", lambda: None)()

    def projections() -> str:
        from adapters.sql import open_db
        from projections.runner import dead_letters

        views = open_db(settings.project, settings.database_url)
        try:
            dead = dead_letters(views)
        finally:
            views.close()
        if dead:
            first = dead[0]
            raise Code3Error(Code.INTERNAL, f"{len(dead)} event(s) a read model could not apply, first: "
                             f"{first['projection']} at notification {first['position']} ({first['error']})",
                             "the worker goes on past them; report them with `code3 audit verify`")
        return "every read model applied every event"

    ops: list[Any] = []  # the store's operational snapshot and the chain's time, read once for the lines below

    def operations() -> tuple[Any, int, list[Any]]:
        from adapters.sql import open_db
        from projections.operations import snapshot

        if not ops:
            app, views, port = open_store(settings.project, settings.database_url), None, None
            try:
                views = open_db(settings.project, settings.database_url)
                port = wiring.chain(settings)
                ops.extend((snapshot(app, views), port.now(), port.list_bounties()))
            finally:
                for each in (app, views, port):
                    getattr(each, "close", lambda: None)()
        return ops[0], ops[1], ops[2]

    def lag() -> str:
        snap, *_ = operations()
        shown = ", ".join(f"{name} {behind}" for name, behind in snap.lag().items())
        stuck = snap.stuck()
        if stuck:  # a worker runs, but its follower keeps stopping at the same event
            raise Code3Error(Code.PRECONDITION, "behind the log (head " + str(snap.head) + "): " + "; ".join(
                f"{n} by {s['behind']} event(s), stopped {s['failures']} rounds in a row for {s['for_s']:.0f} s "
                f"by a transient failure ({s['error']})" for n, s in stuck.items()),
                "the worker tries again every round: check that the forge answers (CODE3_GITHUB_API_URL, the "
                "token's rate limit) and the worker's log")
        stalled = snap.stalled()
        if stalled:
            raise Code3Error(Code.PRECONDITION, f"behind the log (head {snap.head}) with no live worker: "
                             + ", ".join(f"{n} by {b} event(s)" for n, b in stalled.items()),
                             "start `code3 worker` (or see in its log why it stopped): the forge mirror, payouts "
                             "and refunds wait for it")
        return f"events behind the log head {snap.head}: {shown}"

    def leases() -> str:
        snap, *_ = operations()
        if not snap.leases:
            return "no lease held (no worker is following the log)"
        return "; ".join(f"{lease.projection} held by {lease.owner} "
                         + (f"for {lease.expires_in:.0f} s more" if lease.live else
                            "(expired: free to take)" if lease.alive else "(its process is gone: free to take)")
                         for lease in snap.leases)

    def backlog() -> str:
        snap, *_ = operations()
        dead = sum(snap.projection_dead.values())
        detail = (f"{snap.webhook_dead} webhook delivery(ies) dead, {snap.webhook_retrying} retrying; "
                  f"{dead} event(s) no read model could apply")
        if snap.webhook_dead:
            raise Code3Error(Code.PRECONDITION, detail, "see them with `code3 webhooks list`, then "
                             "`code3 webhooks retry` once their cause is fixed")
        return detail

    def payouts() -> str:
        from domain.bounties.contract import Status
        from projections.operations import OVERDUE_AFTER_S

        snap, now, bounties = operations()
        late = snap.overdue(now, bounties)
        paid = ", ".join(f"{count} in {asset} ({amount})" for asset, (count, amount) in snap.payouts.items())
        if late:
            shown = ", ".join(f"{row['bounty_id']} ({now - row['cooling_until']} s)" for row in late[:5])
            raise Code3Error(Code.PRECONDITION, f"{len(late)} bounty(ies) past their cooling end by over "
                             f"{OVERDUE_AFTER_S} s and not paid: {shown}{' and more' if len(late) > 5 else ''}",
                             "check that a `code3 worker` runs and what its log says about the payouts")
        cooling = sum(1 for b in bounties if b.status == Status.COOLING_DOWN)
        return f"none overdue; {cooling} cooling on chain; paid (board): {paid or 'none yet'}"

    def unfunded() -> str:
        from adapters.sql import open_db
        from projections.bounties import board
        from projections.runner import follow

        app, views = open_store(settings.project, settings.database_url), None
        try:
            views = open_db(settings.project, settings.database_url)
            follow(app, views, board.BountyBoard())
            found = board.unfunded(views)
        finally:
            for each in (app, views):
                getattr(each, "close", lambda: None)()
        if found:
            shown = ", ".join(f"{row['task_id'] or row['issue_hash'][:12]} ({row['amount_display']})"
                              for row in found[:5])
            raise Code3Error(Code.PRECONDITION, f"{len(found)} issue(s) announce a bounty the chain refused: {shown}"
                             f"{' and more' if len(found) > 5 else ''}",
                             "publish each feature again with an amount the sponsor holds (on the embedded ledger "
                             "`code3 account fund NAME --amount N` first): the same issue is reused")
        return "every published issue is backed by a bounty"

    def webhook() -> str:
        from adapters.private_files import read_private

        if settings.webhook_secret:
            return "GITHUB_WEBHOOK_SECRET is set"
        path = settings.secrets_dir / "webhook_secret"
        found = read_private(path)  # a linked, foreign or loose one fails here with the way out
        return f"generated secret in {path}" if found is not None else "no secret yet (code3 serve generates one)"

    def modes() -> str:
        from adapters.private_files import loose_modes

        roots = [settings.state_dir, settings.keystore_dir, settings.secrets_dir, settings.workspace_dir]
        loose = loose_modes(*dict.fromkeys(roots), limit=6, allowed=git_object)
        if loose:
            shown = ", ".join(f"{path} ({mode:o})" for path, mode in loose[:5])
            more = " and more" if len(loose) > 5 else ""
            where = " ".join(str(r) for r in dict.fromkeys(roots[:3]))
            forge = settings.state_dir / "forge" / "repos"
            by_hand = "a `git push` by hand into the embedded forge writes with your umask (`code3 forge push` " \
                "does not): " if all(path.is_relative_to(forge) for path, _ in loose) else ""
            raise Code3Error(Code.PRECONDITION, f"state readable by other users: {shown}{more}",
                             f"{by_hand}check that nobody else changed them, then chmod -R go-rwx {where} (keys, "
                             "secrets and databases must be 0600 in 0700 directories; Code3 refuses looser ones)")
        return (f"{settings.state_dir}, the keystore {settings.keystore_dir} and the project's secrets "
                f"{settings.secrets_dir} are private (files 0600, directories 0700)")

    def layout() -> str:
        from adapters.state_guard import guard_project

        guard_project(settings.project)  # tracked by git, a link, another user's, an old .code3/keys: refused
        return (f"{settings.state_dir} holds no key or secret, is not tracked by git and is no link; keys and "
                f"secrets live in CODE3_HOME {settings.home_dir}")

    needs_db = {"event store", "projections", "projection lag", "leases", "dead-letter backlog", "payouts",
                "unfunded issues"}
    for name, probe in (("file modes", modes), ("state layout", layout), ("identity", identity),
                        ("database", database), ("event store", store), ("forge", forge),
                        ("chain", chain), ("webhook secret", webhook), ("projections", projections),
                        ("projection lag", lag), ("leases", leases), ("dead-letter backlog", backlog),
                        ("payouts", payouts), ("unfunded issues", unfunded)):
        down = next((c for c in checks if c.name == "database" and not c.ok), None)
        if name in needs_db and down is not None:  # each would wait out its own timeout on the same outage
            checks.append(Check(name, False, "not checked: the database is unreachable",
                                "see the database check"))
            continue
        checks.append(_run(name, probe))
    return checks


def report(checks: list[Check]) -> str:
    lines = []
    for check in checks:
        lines.append(f"[{'ok' if check.ok else 'FAIL'}] {check.name}: {check.detail}")
        if check.hint and not check.ok:
            lines.append(f"  hint: {check.hint}")  # the hint on its own line, as every CLI refusal gives it
    return "\n".join(lines)
