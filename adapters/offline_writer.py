"""The offline spec writer: spec-kit artifacts filled from templates and the feature description.

No model, no network: the same description always gives the same files (unless a user's template asks
for `[DATE]`), which keeps tests and the demo reproducible. The templates are Code3's own, with
spec-kit's sections (`adapters/templates/`), or a user's spec-kit templates from
`SPEC_KIT_TEMPLATES_DIR`. A slot the writer cannot fill honestly keeps the template's
`[NEEDS CLARIFICATION: …]` marker: a description is quoted, never bent into a sentence it is not.
The LLM-backed writer implements the same port (`adapters.ports.SpecWriter`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path

from domain.errors import Code, Code3Error

TEMPLATES = Path(__file__).with_name("templates")
SPEC_KIT_TEMPLATES = ("spec-template.md", "plan-template.md", "tasks-template.md")  # required in a user's dir
PLAN_TEMPLATES = {"plan.md": "plan-template.md", "research.md": "research-template.md",
                  "data-model.md": "data-model-template.md", "contracts/README.md": "contracts-template.md",
                  "quickstart.md": "quickstart-template.md"}
# one pass over the template: our slots and spec-kit's own placeholders (inserted text is never re-read)
_PLACEHOLDER = re.compile(r"\{\{(\w+)(?:\|([^}]*))?\}\}|\[###-feature-name\]|\[FEATURE NAME\]|\[FEATURE\]|\[DATE\]"
                          r"|\$ARGUMENTS")
_USER_CAN = re.compile(r"(?:users?|a user|the user|people|customers?|visitors?)\s+(?:can|should be able to|"
                       r"must be able to|are able to|is able to|may)\s+(?P<what>.+)", re.IGNORECASE)
_REQUIREMENT = re.compile(r"\*\*(FR-\d{3})\*\*: (.*)")
_CONTRACT = re.compile(r"`(FR-\d{3})`: (.*)")
_MARKER = re.compile(r"\[NEEDS CLARIFICATION: ([^\]]*)\]")
_TITLE = re.compile(r"^# [^:\n]+: (.+)$", re.MULTILINE)


def _sentences(description: str) -> list[str]:
    parts = [p.strip(" .") for p in re.split(r"(?:[.;!?](?:\s+|$))|\n+", description) if p.strip(" .")]
    return parts or [description.strip()]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _shorten(text: str, limit: int = 80) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


class OfflineWriter:
    def __init__(self, templates_dir: Path | None = None, today: Callable[[], date] = date.today) -> None:
        self.templates_dir = templates_dir
        self.today = today

    # --- templates ------------------------------------------------------------------------

    def template(self, name: str) -> str:
        """A template's text: the user's (SPEC_KIT_TEMPLATES_DIR) when configured — spec-kit's three are
        required there, Code3's extras fall back to ours — else ours. Unreadable: E_INTERNAL."""
        path = TEMPLATES / name
        if self.templates_dir is not None and (name in SPEC_KIT_TEMPLATES or (self.templates_dir / name).is_file()):
            path = self.templates_dir / name
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
            raise Code3Error(Code.INTERNAL, f"template read failed: {path} ({reason})",
                             "set SPEC_KIT_TEMPLATES_DIR to a readable directory holding spec-template.md, "
                             "plan-template.md and tasks-template.md (or unset it for the built-in "
                             "templates), or check its permissions") from None

    def fill(self, name: str, slots: Mapping[str, str | None], feature_id: str, title: str,
             description: str = "") -> str:
        fixed = {"[###-feature-name]": feature_id, "[FEATURE NAME]": title, "[FEATURE]": title,
                 "$ARGUMENTS": _one_line(description)}

        def replace(match: re.Match[str]) -> str:
            if match[1] is None:
                token = match[0]
                return self.today().isoformat() if token == "[DATE]" else fixed[token]
            value = slots.get(match[1])
            return value if value else f"[NEEDS CLARIFICATION: {match[2] or match[1].replace('_', ' ')}]"

        return _PLACEHOLDER.sub(replace, self.template(name))

    # --- the port ---------------------------------------------------------------------------

    def spec(self, feature_id: str, description: str) -> str:
        sentences = _sentences(description)
        wishes = [m["what"] for m in map(_USER_CAN.fullmatch, sentences) if m]
        requirements = []
        for i, sentence in enumerate(sentences, 1):
            wish = _USER_CAN.fullmatch(sentence)
            text = (f"Users MUST be able to {wish['what']}." if wish
                    else f'The system MUST provide what the description asks for: "{sentence}".')
            requirements.append(f"- **FR-{i:03d}**: {text}")
        first = wishes[0] if wishes else None
        slots = {
            "story_title": _shorten(first[0].upper() + first[1:], 60) if first else None,
            "story": " ".join(f"A user can {w}." for w in wishes) or None,
            "when": f"a user tries to {first}" if first else None,
            "requirements": "\n".join(requirements),
        }
        return self.fill("spec-template.md", slots, feature_id, _shorten(sentences[0]), description)

    def plan(self, feature_id: str, spec_md: str, tech_constraints: str | None) -> dict[str, str]:
        reqs = _REQUIREMENT.findall(spec_md)
        title = m[1] if (m := _TITLE.search(spec_md)) else feature_id
        questions = _MARKER.findall(spec_md)
        slots: dict[str, str | None] = {
            "constraints": _one_line(tech_constraints) if tech_constraints and tech_constraints.strip()
            else "none stated; follow the repository's existing conventions",
            "requirement_rows": "\n".join(f"| {rid} | {_cell(text)} |" for rid, text in reqs) or None,
            "contracts": "\n".join(f"- `{rid}`: {text}" for rid, text in reqs) or None,
            "open_questions": "\n".join(f"- {q}" for q in questions) or "None: the spec has no open question.",
            "complexity": "None.",
        }
        return {out: self.fill(name, slots, feature_id, title) for out, name in PLAN_TEMPLATES.items()}

    def tasks(self, feature_id: str, artifacts: dict[str, str]) -> str:
        reqs = _CONTRACT.findall(artifacts.get("contracts/README.md", "")) or [("FR-001", "the feature as specified")]
        title = m[1] if (m := _TITLE.search(artifacts.get("spec.md", ""))) else feature_id
        numbers = iter(range(1, 1000))
        line = lambda text: f"- [ ] T{next(numbers):03d} {text}"  # noqa: E731
        slots = {
            "setup_tasks": line("Set up the project structure for the feature"),
            "test_tasks": "\n".join(line(f"[P] Contract test for {rid} (must fail first)") for rid, _ in reqs),
            "core_tasks": "\n".join(line(f"Implement {rid} (after its contract test): {text}") for rid, text in reqs),
            "integration_tasks": line("Integration test of the primary user story (quickstart.md)"),
            "polish_tasks": line("[P] Docs and quickstart validation"),
        }
        return self.fill("tasks-template.md", slots, feature_id, title)
