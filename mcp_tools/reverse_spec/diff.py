"""`diff`: a spec's embedded baseline skeleton against the current source (no model), and accepting drift.

Accepting (CLI `code3 spec diff --accept`; the seed's tool schema has no such argument, so the MCP tool
stays read-only) rewrites the baseline, diagrams, inventory, `skeletonHash` and `lastUpdated` in place —
the nine sections' prose is kept byte for byte — and records a DriftAccepted event.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from domain.drift import compare
from domain.errors import Code, Code3Error
from domain.generated_spec import GeneratedSpec
from domain.module_graph import api_hash
from domain.spec_document import SpecFormatError, parse, replace_baseline
from mcp_tools.declare import tool
from mcp_tools.reverse_spec.answers import DiffAnswer
from mcp_tools.reverse_spec.common import (
    PROFILE,
    failed,
    load_skeleton,
    paths_of,
    relative,
    resolve,
    seed_errors,
    who,
)
from mcp_tools.reverse_spec.generate import now_iso
from mcp_tools.services import Services

SpecPath = Annotated[str, Field(description="Spec 文件路径（.spec.md）")]
SourcePath = Annotated[str, Field(description="源代码文件或目录路径")]


def check_drift(s: Services, spec_path: str, source_path: str, accept: bool = False) -> DiffAnswer:
    real = resolve(s, spec_path, kind="file")
    spec_rel = relative(s, real)
    try:
        text = paths_of(s).read_bytes(spec_rel).decode("utf-8")
        document = parse(text)
    except (SpecFormatError, UnicodeDecodeError) as exc:
        raise Code3Error(Code.VALIDATION, f"{spec_rel} 不是可比较的 spec: {exc}",
                         "pass a .spec.md written by generate or batch (it embeds the baseline skeleton)") from None
    _rel, current = load_skeleton(s, source_path)
    drift = compare(document.baseline, current)
    before, after = api_hash(document.baseline.files), api_hash(current.files)
    accepted = False
    if accept and (drift.has_drift or before != after or document.baseline.hash != current.hash):
        new_text = replace_baseline(text, current, {"skeletonHash": after, "lastUpdated": now_iso()})
        paths_of(s).write_text(spec_rel, new_text)
        accepted = True

        def change(spec: GeneratedSpec | None) -> GeneratedSpec:
            if spec is None:  # a spec written before events were kept (or by hand) joins the log
                spec = GeneratedSpec(spec_path=spec_rel, source_target=str(document.front.get("sourceTarget", "")),
                                     skeleton_hash=before, model=str(document.front.get("model", "unknown")),
                                     input_tokens=0, output_tokens=0, who="(adopted)", version=document.version,
                                     confidence=str(document.front.get("confidence", "medium")))
            spec.accept_drift(who=who(s), from_hash=before, to_hash=after, high=drift.count("high"),
                              medium=drift.count("medium"), low=drift.count("low"))
            return spec

        s.store.update(GeneratedSpec, GeneratedSpec.create_id(spec_rel), change)
    return {"specPath": spec_rel, "sourcePath": source_path, "hasDrift": drift.has_drift,
            "summary": drift.summary(),  # type: ignore[typeddict-item]
            "items": [i.as_dict() for i in drift.items],  # type: ignore[misc]
            "recommendation": drift.recommendation(), "baselineHash": before, "currentHash": after,
            "accepted": accepted}


@tool("diff", profiles=PROFILE, read_only=True, open_world=False, error_text=failed("diff"))
@seed_errors
def diff(s: Services, specPath: SpecPath, sourcePath: SourcePath) -> DiffAnswer:
    """Spec 漂移检测

    Compares the spec's embedded baseline skeleton with the current source: a removed export is high, a
    signature, kind or member change medium, an addition low; whitespace, comments, trailing commas, import
    order and moved lines are filtered and counted. No model is called.
    """
    return check_drift(s, specPath, sourcePath)
