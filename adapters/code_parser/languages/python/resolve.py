"""Python imports → project files: relative and absolute imports within the project, packages' `__init__.py`,
submodules named in `from p import m`, and namespace packages (no `__init__.py`) holding the importing file."""

from __future__ import annotations

import posixpath

from adapters.code_parser.resolution import ProjectIndex, join
from domain.knowledge.skeleton import Import


def resolve_import(imp: Import, path: str, ix: ProjectIndex) -> str | None:
    spec = imp.specifier
    names = [n for n in imp.names if n != "*"]
    if spec.startswith("."):
        level = len(spec) - len(spec.lstrip("."))
        base = posixpath.dirname(path)
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        roots = [base]
        module = spec[level:]
    else:
        # source roots: above the topmost package holding the file, the project root, src/, and above each
        # directory holding the file that the import's first name names (a namespace package has no __init__.py)
        top = posixpath.dirname(path)
        while top and ix.is_file(join(top, "__init__.py")):
            top = posixpath.dirname(top)
        head = spec.split(".")[0]
        namespaces = [posixpath.dirname(d) for d in ix.ancestors(posixpath.dirname(path))
                      if d and posixpath.basename(d) == head]
        roots = list(dict.fromkeys([top, "", "src", *namespaces]))
        module = spec
    parts = module.split(".") if module else []
    for root in roots:
        base = join(root, *parts)
        if names:  # `from pkg import core` names the submodule pkg/core.py
            sub = ix.first_file([join(base, names[0]) + ".py", join(base, names[0], "__init__.py")])
            if sub:
                return sub
        found = ix.first_file(([base + ".py", base + ".pyi"] if parts else []) + [join(base, "__init__.py")])
        if found:
            return found
    return None
