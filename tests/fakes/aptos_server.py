"""The Aptos fullnode stand-in as a process of its own: `python -m tests.fakes.aptos_server --state DIR
--resolver ADDRESS --cooling-period S [--dispute-period S]` prints `{"url", "module_address", "asset_metadata"}`
on stdout and serves until SIGTERM. Its ledger is a SQLite file in DIR, so what it committed survives the processes
that use it.

Beside the fullnode REST API (tests/fakes/aptos_node.py), the operator's routes under /_control/:
- `POST /_control/mint {"address", "amount"}`: the faucet.
- `GET /_control/ledger?addresses=A,B`: every bounty as the contract stores it, every event (type and data),
  the escrow's balance and the balances of the addresses named: what a campaign checks money against.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

from adapters.aptos_abi import normalize_address
from adapters.ledger_tables import ESCROW
from domain.bounties.contract import DEFAULT_DISPUTE_PERIOD
from tests.fakes.aptos_http import Reply, error
from tests.fakes.aptos_node import MODULE_ADDRESS, USDT_METADATA, AptosNode

CONTROL = "/_control/"


class StandaloneNode(AptosNode):
    def handle(self, method: str, path: str, query: dict[str, str], headers: Any, body: bytes) -> Reply:
        if not path.startswith(CONTROL):
            return super().handle(method, path, query, headers, body)
        route = (method, path[len(CONTROL):].strip("/"))
        with self._lock:
            if route == ("POST", "mint"):
                given = json.loads(body)
                amount = int(given["amount"])
                if amount <= 0:
                    return error(400, "amount must be positive", "invalid_input")
                self.mint(str(given["address"]), amount)
                return Reply(200, {"minted": amount})
            if route == ("GET", "ledger"):
                return Reply(200, self.summary([a for a in query.get("addresses", "").split(",") if a]))
        return error(404, f"no control route {method} {path}", "web_framework_error")

    def summary(self, addresses: list[str]) -> dict[str, Any]:
        bounties = [{**dataclasses.asdict(b), "mode": int(b.mode), "status": b.status.name}
                    for b in self.ledger.list_bounties()]
        events = [{"type": e.type, "data": e.data, "version": e.version, "index": e.index}
                  for e in self.ledger.events_since(0, limit=-1)]
        return {"bounties": bounties, "events": events, "escrow": self.ledger.balance(ESCROW, "USDT"),
                "balances": {a: self.ledger.balance(normalize_address(a), "USDT") for a in addresses},
                "now": self.ledger.now(), "errors": list(self.errors)}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.aptos_server")
    parser.add_argument("--state", type=Path, required=True, help="directory of the ledger's SQLite file")
    parser.add_argument("--resolver", required=True, help="the address whose merge reports the contract accepts")
    parser.add_argument("--cooling-period", type=int, default=100)
    parser.add_argument("--dispute-period", type=int, default=DEFAULT_DISPUTE_PERIOD)
    args = parser.parse_args()
    args.state.mkdir(parents=True, exist_ok=True, mode=0o700)  # Code3's SQLite refuses a shared directory
    node = StandaloneNode(args.state / "aptos-node.sqlite", MODULE_ADDRESS, {USDT_METADATA: "USDT"},
                          cooling_period=args.cooling_period, resolver=args.resolver,
                          dispute_period=args.dispute_period)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(json.dumps({"url": node.url, "module_address": MODULE_ADDRESS, "asset_metadata": USDT_METADATA,
                      "pid": os.getpid()}), flush=True)
    while not stop.wait(0.5):
        pass
    node.close()


if __name__ == "__main__":
    main()
