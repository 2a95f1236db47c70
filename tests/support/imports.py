"""What a Python module imports, read from its source (never imported): the layout test
(tests/unit/test_layout.py) and bench/house.py read the code's import graph the same way."""

from __future__ import annotations

import ast


def statement_imports(module: str, is_package: bool, text: str) -> list[tuple[str, list[str]]]:
    """(the module an import statement names, the names it takes) for every import statement
    of `module`'s source `text`, wherever it is (functions included); relative imports
    resolved against the module's package (the module itself when `is_package`)."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(text, module)):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((base, [alias.name for alias in node.names]))
    return found
