"""The source tree's shape: lines per package, import circles, longest functions, `run`'s parameters.

    python benchmarks/structure.py [--top 15]

Import circles are read from the module graph that `ast` gives: every import statement counts,
module-level or inside a function, so a circle hidden behind a function-local import is still a
circle.  `from pkg import name` is an edge to `pkg.name` when that is a module, else to `pkg`; a
package's own `__init__` is not counted as imported by importing one of its submodules (the
convention of import-linter and pydeps).  tests/test_structure.py reads the graph from here.
"""

from __future__ import annotations

import argparse
import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def module_files(src: Path = SRC, top: str = "novikoff") -> dict[str, Path]:
    """Map each module name under `top` to its file."""
    out = {}
    for path in sorted((src / top).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_package(name: str, files: dict[str, Path]) -> bool:
    return files[name].name == "__init__.py"


def _resolve(node: ast.ImportFrom, module: str, files: dict[str, Path]) -> str:
    """The absolute module a `from ... import` names (before its imported names)."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not _is_package(module, files):
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_local(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether an import statement sits inside a function."""
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return True
    return False


def import_graph(files: dict[str, Path] | None = None):
    """(edges, local_imports): module -> set of imported project modules, and the list of
    (module, line, [imported modules]) of every function-local import statement."""
    files = module_files() if files is None else files
    edges: dict[str, set[str]] = defaultdict(set)
    local: list[tuple[str, int, str]] = []
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node, module, files)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base
                           for a in node.names]
            else:
                continue
            if _is_local(node, parents):
                local.append((module, node.lineno, targets))
            for target in targets:
                while target and target not in files:  # `import a.b.c` of a name in a.b
                    target = target.rpartition(".")[0]
                if target and target != module:
                    edges[module].add(target)
    return edges, local


def circles(edges: dict[str, set[str]], inside=lambda module: True) -> list[list[str]]:
    """The import circles (strongly connected components of more than one module) among the
    modules for which `inside` holds, each sorted, largest first (Tarjan's algorithm)."""
    nodes = sorted({m for m in edges if inside(m)} | {t for s in edges.values() for t in s
                                                      if inside(t)})
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if not inside(w):
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in nodes:
        if v not in index:
            visit(v)
    return sorted(found, key=lambda c: (-len(c), c))


def functions(files: dict[str, Path] | None = None):
    """(lines, qualified name, parameter count) of every function, longest first."""
    files = module_files() if files is None else files
    out = []
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))

        def walk(node, prefix):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    a = child.args
                    params = (len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
                              + bool(a.vararg) + bool(a.kwarg))
                    name = f"{prefix}.{child.name}"
                    out.append((child.end_lineno - child.lineno + 1, name, params))
                    walk(child, name)
                elif isinstance(child, ast.ClassDef):
                    walk(child, f"{prefix}.{child.name}")
        walk(tree, module)
    return sorted(out, key=lambda t: (-t[0], t[1]))


def package_lines(files: dict[str, Path] | None = None) -> dict[str, int]:
    """Lines per top-level subpackage of novikoff (module files at the top count as 'novikoff')."""
    files = module_files() if files is None else files
    lines: dict[str, int] = defaultdict(int)
    for module, path in files.items():
        parts = module.split(".")
        pkg = ".".join(parts[:2]) if len(parts) > 1 and _is_package(".".join(parts[:2]), files) \
            else parts[0]
        lines[pkg] += len(path.read_text(encoding="utf-8").splitlines())
    return dict(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args(argv)
    files = module_files()
    lines = package_lines(files)
    print(f"lines: total {sum(lines.values())}")
    for pkg, n in sorted(lines.items(), key=lambda t: -t[1]):
        print(f"  {pkg:<28} {n:>6}")
    edges, local = import_graph(files)
    found = circles(edges)
    print(f"import circles in src/novikoff: {len(found)}")
    for c in found:
        print(f"  {len(c):>2}: {' '.join(c)}")
    project_local = [t for t in local if any(m.startswith("novikoff") for m in t[2])]
    print(f"function-local import statements: {len(local)} ({len(project_local)} of project "
          f"modules)")
    funcs = functions(files)
    print(f"{args.top} longest functions:")
    for n, name, params in funcs[: args.top]:
        print(f"  {n:>4} lines  {params:>2} params  {name}")
    runtime = [f for f in funcs if f[1].startswith("novikoff.runtime.")]
    over = [f for f in runtime if f[0] > 80]
    print(f"runtime functions over 80 lines: {len(over)}")
    for n, name, params in funcs:
        if name in ("novikoff.runtime._engine.run", "novikoff.runtime._variants.run",
                    "novikoff.runtime._engine.run_online"):
            print(f"parameters of {name}: {params} ({n} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
