"""The house as it stands: its rooms (packages), the links between them, and its largest modules.

    python bench/house.py [--rev REV]

Reads the Python modules of `rollouts/` (of a git revision with `--rev`, without checking it
out) and prints:
- each package (a folder with an `__init__.py`; top-level modules count as `rollouts`): modules,
  lines, and its side doors: links from outside the package (and its sub-packages) straight to
  one of its modules instead of its face;
- the links between packages: distinct (importing module, imported module) pairs that cross a
  package boundary: to a face (`__init__`), from a sub-package to a parent's module (which the
  layout test allows), or past a face into a module;
- private names imported across modules (`from .x import _y`);
- the largest modules and how many sit within 10 lines of 300 (the old cap).

It prints figures only; tests/unit/test_layout.py is what enforces the rules.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.imports import statement_imports  # noqa: E402


def sources(rev: str | None) -> dict[str, str]:
    """Path -> text of every Python file under rollouts/ (at `rev`, or in the working tree)."""
    if rev is None:
        return {str(p.relative_to(REPO)): p.read_text() for p in REPO.glob("rollouts/**/*.py")}
    names = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", rev, "rollouts/"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return {
        name: subprocess.run(
            ["git", "show", f"{rev}:{name}"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout
        for name in names
        if name.endswith(".py")
    }


def module_of(path: str) -> str:
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", help="a git revision (default: the working tree)")
    parser.add_argument("--largest", type=int, default=12)
    args = parser.parse_args()
    files = sources(args.rev)
    modules = {module_of(path): path for path in files}
    packages = {m for m, p in modules.items() if p.endswith("__init__.py")}

    def package_of(module: str) -> str:
        return module if module in packages else module.rpartition(".")[0]

    lines = {m: len(files[p].splitlines()) for m, p in modules.items()}
    links: set[tuple[str, str]] = set()
    private: list[str] = []
    for module, path in modules.items():
        for imported, names in statement_imports(module, path.endswith("__init__.py"), files[path]):
            targets = [imported, *(f"{imported}.{n}" for n in names)]
            target = next((t for t in reversed(targets) if t in modules), None)
            if target is None or target == module:
                continue
            if package_of(target) != package_of(module):
                links.add((module, target))
            if target not in packages:
                private += [f"{module} <- {target}.{n}" for n in names if n.startswith("_")]

    rev = args.rev or "working tree"
    print(f"# the house at {rev}: {len(modules)} modules, {sum(lines.values())} lines")
    print("\n## rooms (packages)")
    print(f"{'package':34} {'modules':>7} {'lines':>6} {'side doors':>10}")

    def side_door(importer: str, target: str) -> bool:
        home = package_of(target)
        return target not in packages and not importer.startswith(home + ".")

    doors = Counter(package_of(t) for a, t in links if side_door(a, t))
    for package in sorted(packages):
        inside = [m for m in modules if package_of(m) == package]
        total = sum(lines[m] for m in inside)
        print(f"{package:34} {len(inside):7} {total:6} {doors[package]:10}")
    to_face = sum(1 for _, t in links if t in packages)
    past = sum(1 for a, t in links if side_door(a, t))
    print(
        f"\n## links between packages: {len(links)} module pairs: {to_face} to a face, "
        f"{len(links) - to_face - past} to a parent's module, {past} past a face into a module"
    )
    pairs = Counter((package_of(a), package_of(b)) for a, b in links)
    print(f"{len(pairs)} package pairs")
    print(f"\n## private names imported across modules: {len(private)}")
    for line in private:
        print(f"  {line}")
    print(f"\n## the {args.largest} largest modules")
    for module in sorted(lines, key=lambda m: -lines[m])[: args.largest]:
        print(f"{lines[module]:6}  {modules[module]}")
    near = sum(1 for n in lines.values() if 290 <= n <= 300)
    print(f"\nmodules of 290-300 lines: {near}; over 300: {sum(n > 300 for n in lines.values())}")


if __name__ == "__main__":
    main()
