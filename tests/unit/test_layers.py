"""Imports run one way: domain ← adapters ← projections ← mcp_tools ← scheduler ← code3 (DESIGN.md, Layout).

Every module's imports are read, lazy ones inside functions included; an arrow that runs back up, or an
I/O import in domain/, fails with the module and line that holds it.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("domain", "adapters", "projections", "mcp_tools", "scheduler", "code3")
# domain/ is pure: the modelling libraries and pure computation only, no I/O.
DOMAIN_THIRD_PARTY = {"eventsourcing", "pydantic", "rapidfuzz", "diff_match_patch"}
DOMAIN_FORBIDDEN_STDLIB = {"os", "io", "sqlite3", "subprocess", "socket", "shutil", "tempfile", "http",
                           "urllib.request", "asyncio", "threading", "multiprocessing", "logging", "pathlib", "glob",
                           "ssl", "select"}


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def _modules() -> list[tuple[str, Path]]:
    return [(layer, path) for layer in LAYERS for path in sorted((ROOT / layer).rglob("*.py"))]


def test_no_import_runs_back_up_the_layers() -> None:
    wrong = []
    for layer, path in _modules():
        for line, module in _imports(path):
            top = module.split(".")[0]
            if top in LAYERS and LAYERS.index(top) > LAYERS.index(layer):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module} ({layer} may not import {top})")
    assert not wrong, "\n".join(wrong)


def test_domain_imports_no_io_and_no_library_beyond_the_modelling_ones() -> None:
    stdlib = sys.stdlib_module_names
    wrong = []
    for layer, path in _modules():
        if layer != "domain":
            continue
        for line, module in _imports(path):
            top = module.split(".")[0]
            io = top in DOMAIN_FORBIDDEN_STDLIB or module in DOMAIN_FORBIDDEN_STDLIB
            third_party = top not in {*stdlib, *LAYERS, *DOMAIN_THIRD_PARTY, "__future__"}
            if io or third_party:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not wrong, "\n".join(wrong)


def test_the_layer_check_sees_lazy_imports_inside_functions(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from code3 import wiring\n    return wiring\n")
    assert (2, "code3") in _imports(module)


def test_no_module_imports_itself_around_a_cycle_nor_another_modules_private_name() -> None:
    """scripts/structure.py's graph (lazy imports included): issue 27 brought the cycles to zero; a new one fails
    here with its modules named."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("structure", ROOT / "scripts" / "structure.py")
    assert spec is not None and spec.loader is not None
    structure = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(structure)
    mods = structure.modules()
    graph, private = {}, []
    for name, path in mods.items():
        graph[name], taken = structure.imports(path, name, set(mods))
        private += taken
    assert structure.cycles(graph) == [], "import cycles"
    assert private == [], "imports of another module's private name"
