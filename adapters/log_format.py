"""Log lines as JSON objects (`CODE3_LOG_FORMAT=json`), one per line, for log shippers that parse fields.

Each line carries time (UTC, ISO 8601), level, logger, message and the record's extra fields; an exception
comes as its text under `exception`. The message is scrubbed by `ScrubFilter` before it gets here; the
extra fields and the exception text are scrubbed here (a field named like a credential is withheld whole),
so a secret reaches a JSON line no more than a text one.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from typing import Any

from adapters.scrub import REDACTED, scrub

_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}
_SECRET_NAME = re.compile(r"(?i)token|secret|password|passphrase|private|authorization|api_key|credential")


def _clean(value: Any, depth: int = 0) -> Any:
    """`value` as JSON with every string scrubbed (containers to a few levels; anything else as its str)."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return scrub(value)
    if depth < 4 and isinstance(value, dict):
        return {str(k): REDACTED if _SECRET_NAME.search(str(k)) else _clean(v, depth + 1) for k, v in value.items()}
    if depth < 4 and isinstance(value, list | tuple | set | frozenset):
        return [_clean(v, depth + 1) for v in value]
    return scrub(str(value))


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname, "logger": record.name, "message": scrub(record.getMessage())}
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_") and key not in entry:
                entry[key] = REDACTED if _SECRET_NAME.search(key) else _clean(value)
        if record.exc_info:
            entry["exception"] = scrub(self.formatException(record.exc_info))
        elif record.exc_text:
            entry["exception"] = scrub(record.exc_text)
        if record.stack_info:
            entry["stack"] = scrub(self.formatStack(record.stack_info))
        return json.dumps(entry, ensure_ascii=False, default=str)
