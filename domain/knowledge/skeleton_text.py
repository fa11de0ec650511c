"""The skeleton as compact text for a model's context: per file its exports (signature, doc) and imports."""

from __future__ import annotations

from collections.abc import Iterable

from domain.knowledge.skeleton import Export, FileSkeleton, normalize_signature


def _export_lines(export: Export, indent: str, docs: bool, members: bool) -> list[str]:
    signature = normalize_signature(export.signature) or export.name
    lines = [f"{indent}- [{export.kind}] {signature}  (lines {export.start_line}-{export.end_line})"]
    if docs and export.doc:
        doc = " ".join(export.doc.split())
        lines.append(f"{indent}  doc: {doc[:300]}{'…' if len(doc) > 300 else ''}")
    if members:
        for member in export.members:
            lines.extend(_export_lines(member, indent + "    ", docs, False))
    return lines


def file_text(f: FileSkeleton, *, docs: bool = True, members: bool = True) -> str:
    lines = [f"### {f.path} ({f.language}, {f.lines} lines)"]
    if f.parse_errors:
        lines.append(f"parse errors: {'; '.join(f.parse_errors[:5])}")
    if f.exports:
        lines.append("exports:")
        for export in f.exports:
            lines.extend(_export_lines(export, "", docs, members))
    else:
        lines.append("exports: none")
    if f.imports:
        rendered = []
        for imp in f.imports:
            target = f" -> {imp.resolved}" if imp.resolved else ""
            names = f" {{{', '.join(imp.names)}}}" if imp.names else ""
            rendered.append(f"{imp.specifier}{names}{target}")
        lines.append("imports: " + "; ".join(rendered))
    return "\n".join(lines)


def skeleton_text(files: Iterable[FileSkeleton], *, docs: bool = True, members: bool = True) -> str:
    return "\n\n".join(file_text(f, docs=docs, members=members) for f in files)
