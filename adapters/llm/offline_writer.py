"""The offline reverse-spec writer: the nine sections from the AST skeleton alone, deterministic.

No model and no network: what the skeleton shows (exports, signatures, doc comments, members, imports,
parse errors, test files) is written as facts; what only reading the code with understanding could tell
(business rules, constraints) is left as `[NEEDS CLARIFICATION: …]`. The caller says so in `warnings`.
"""

from __future__ import annotations

import re
from collections import Counter

from domain.knowledge.skeleton import Export, MergedSkeleton, normalize_signature

MODEL = "offline"
WARNING = ("offline writer: no ANTHROPIC_API_KEY, so the spec was written from the AST skeleton only "
           "(exports, signatures, doc comments, imports); business logic and constraints are marked "
           "[NEEDS CLARIFICATION]")
TEST_FILE = re.compile(r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]+$|_test\.\w+$|\.(test|spec)\.\w+$")
DATA_KINDS = frozenset({"class", "struct", "interface", "record", "enum", "union", "type", "trait", "protocol",
                        "object"})
CALLABLE_KINDS = frozenset({"function", "method", "constructor", "macro"})


OPTIONAL = re.compile(r"Optional\[|\| None|None \||\?\s*[:,)]|=\s*None\b|\bnull\b|\bnil\b|Option<")


def _plural(word: str, n: int) -> str:
    if n == 1:
        return word
    return word + ("es" if word.endswith(("s", "x", "sh", "ch")) else "s")


def _first_sentence(doc: str | None) -> str:
    if not doc:
        return ""
    text = " ".join(doc.split())
    match = re.match(r"(.+?[.。!?])(\s|$)", text)
    return (match.group(1) if match else text)[:200]


def _sig(export: Export) -> str:
    return normalize_signature(export.signature) or export.name


def sections(merged: MergedSkeleton, target: str) -> dict[str, str]:
    files = merged.files
    exports = [(f.path, e) for f in files for e in f.exports]
    kinds = Counter(e.kind for _, e in exports)
    languages = Counter(f.language for f in files)
    documented = [(p, e) for p, e in exports if e.doc]
    kind_text = ", ".join(f"{n} {_plural(k, n)}" for k, n in sorted(kinds.items())) or "no exports"
    lang_text = ", ".join(f"{lang} ({n})" for lang, n in sorted(languages.items())) or "no source files"

    intent = [f"`{target}` holds {len(files)} source file(s) in {lang_text}, exporting {kind_text}."]
    summaries = [f"- `{e.name}`: {_first_sentence(e.doc)}" for _, e in documented[:12] if _first_sentence(e.doc)]
    if summaries:
        intent.append("What its doc comments say:\n" + "\n".join(summaries))
    intent.append("[NEEDS CLARIFICATION: the purpose of this module in the product, which the skeleton alone "
                  "does not state]")

    interface = []
    for f in files:
        if not f.exports:
            continue
        interface.append(f"### `{f.path}`\n")
        interface.append("| export | kind | signature | lines |\n| --- | --- | --- | --- |")
        for e in f.exports:
            signature = _sig(e).replace("|", "\\|")
            interface.append(f"| `{e.name}` | {e.kind} | `{signature}` | {e.start_line}-{e.end_line} |")
        interface.append("")
    if not interface:
        interface.append("No exported API was found.")

    logic = [f"- `{e.name}` ({p}): {_first_sentence(e.doc) or 'no doc comment'}"
             for p, e in exports if e.kind in CALLABLE_KINDS][:40]
    business = ("Callable entry points:\n" + "\n".join(logic) + "\n\n" if logic else "")
    business += ("[NEEDS CLARIFICATION: the rules these functions implement; the offline writer reads "
                 "signatures, not bodies]")

    data = []
    for p, e in exports:
        if e.kind not in DATA_KINDS:
            continue
        data.append(f"- **{e.name}** ({e.kind}, `{p}`)" + (f": {_first_sentence(e.doc)}" if e.doc else ""))
        data.extend(f"  - `{_sig(m)}`" for m in e.members[:25])
    constants = [f"- `{_sig(e)}` ({p})" for p, e in exports if e.kind in ("const", "variable")]
    if constants:
        data.append("\nConstants and module-level values:\n" + "\n".join(constants[:30]))

    typed = sum(1 for _, e in exports if "->" in e.signature or ":" in e.signature)
    constraints = [f"- {typed} of {len(exports)} exports declare types in their signatures."] if exports else []
    asyncs = [e.name for _, e in exports if e.signature.lstrip().startswith("async ")]
    if asyncs:
        constraints.append(f"- Asynchronous API: {', '.join(f'`{n}`' for n in asyncs[:15])} must be awaited.")
    constraints.append("[NEEDS CLARIFICATION: performance, security and compatibility constraints]")

    edge = ["[NEEDS CLARIFICATION: behaviour on invalid input, empty collections and failures; the skeleton does "
            "not show error handling]"]
    optional = [e.name for _, e in exports if OPTIONAL.search(e.signature)]
    if optional:
        edge.insert(0, f"- Optional values appear in: {', '.join(f'`{n}`' for n in optional[:15])}.")

    debt: list[str] = []
    broken = [f for f in files if f.parse_errors]
    if broken:
        debt.extend(f"- `{f.path}` does not parse cleanly: {'; '.join(f.parse_errors[:3])}" for f in broken)
    undocumented = [e.name for _, e in exports if not e.doc]
    if exports:
        debt.append(f"- {len(undocumented)} of {len(exports)} exports have no doc comment"
                    + (f" ({', '.join(f'`{n}`' for n in undocumented[:10])}{', …' if len(undocumented) > 10 else ''})."
                       if undocumented else "."))
    large = [f"`{f.path}` ({f.lines} lines)" for f in files if f.lines > 500]
    if large:
        debt.append(f"- Large files: {', '.join(large)}.")
    if not debt:
        debt.append("Nothing visible in the skeleton.")

    tests = [f.path for f in files if TEST_FILE.search(f.path)]
    coverage = (f"Test files in the target: {', '.join(f'`{t}`' for t in tests)}." if tests else
                "No test files inside the target. [NEEDS CLARIFICATION: where this module is tested]")

    internal = sorted({(f.path, i.resolved) for f in files for i in f.imports if i.resolved and i.resolved != f.path})
    external = sorted({i.specifier for f in files for i in f.imports if not i.resolved and not i.relative})
    deps = []
    if internal:
        deps.append("Inside the project:\n" + "\n".join(f"- `{a}` → `{b}`" for a, b in internal[:60]))
    if external:
        deps.append("External: " + ", ".join(f"`{x}`" for x in external[:60]))
    if not deps:
        deps.append("None.")

    return {
        "intent": "\n\n".join(intent),
        "interface": "\n".join(interface).strip(),
        "business_logic": business,
        "data_structures": "\n".join(data).strip() or "No class-like or constant exports.",
        "constraints": "\n".join(constraints),
        "edge_cases": "\n".join(edge),
        "technical_debt": "\n".join(debt),
        "test_coverage": coverage,
        "dependencies": "\n\n".join(deps),
    }
