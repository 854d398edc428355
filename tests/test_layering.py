"""The package's import layering (README "Layout", docs/layout.md).

Invariants: every module imports only modules of its own layer or below (the table LAYERS,
bottom first); `games` imports nothing else of the package and no game's rules import another
game's; the Gongzhu stack never imports a side game; the side games never import each other;
there is no import cycle between modules; imports inside functions are only of the optional
OpenSpiel dependency; the tests folder mirrors the package. The checker itself is tested on a
small made-up graph, so that a broken checker cannot pass silently.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "scrofazero"

# Bottom first: a module may import its own layer's packages and those below. Packages that share
# a layer may not import each other, except within the same package; nor may the side games.
LAYERS = [
    ("scrofazero.atomic", 0),
    ("scrofazero.run_lock", 0),
    ("scrofazero.cluster", 0),  # Ray, imported only inside its functions
    ("scrofazero.settings", 0),  # what a setting may hold, and its check
    ("scrofazero.games", 0),  # rules only
    ("scrofazero.search", 1),  # knows games only through its protocols
    ("scrofazero.runs", 1),  # the run harness every trainer runs under
    ("scrofazero.nn", 2),
    ("scrofazero.fish", 2),  # a side game: the shared base and its rules, no Gongzhu stack
    ("scrofazero.sampling", 3),
    ("scrofazero.agents", 4),
    ("scrofazero.eval", 5),
    ("scrofazero.train", 6),
    ("scrofazero.config", 7),
    ("scrofazero.openspiel", 8),
    ("scrofazero.pettingzoo", 8),  # the optional [pettingzoo] extra
    ("scrofazero.tiny_crew", 9),  # above openspiel: its optional MCCFR uses OpenSpiel's game
    ("scrofazero.serve", 10),  # the table server (play.py): hosts Gongzhu and Fish tables
    ("scrofazero.entry", 11),  # the entry points' table
]
GONGZHU_STACK = ("scrofazero.search", "scrofazero.nn", "scrofazero.sampling", "scrofazero.agents",
                 "scrofazero.eval", "scrofazero.train", "scrofazero.config")
SIDE_GAMES = ("scrofazero.tiny_crew", "scrofazero.fish", "scrofazero.games.tiny_crew",
              "scrofazero.games.fish")
# Imports allowed inside functions: the optional open-spiel extra and what needs it.
LAZY_OK = ("pyspiel", "open_spiel", "scrofazero.openspiel", "scrofazero.tiny_crew.mccfr",
           "scrofazero.serve.app",  # ^ and the web server of the optional [play] extra
           "ray")  # the optional [ray] extra (scrofazero/cluster.py)


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_of(module: str) -> tuple[str, int]:
    if module == "scrofazero":  # the empty top-level __init__
        return module, 0
    for prefix, layer in LAYERS:
        if _within(module, prefix):
            return prefix, layer
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in tests/test_layering.py")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> list[tuple[str, bool, int]]:
    """(imported module, inside a function, line) for every import of `path`; relative imports
    are resolved; `from package import name` counts as importing package.name when that is a
    module of the package."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = []

    def visit(node, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                found.extend((alias.name, nested, child.lineno) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package[: len(package) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                found.append((target, nested, child.lineno))
                for alias in child.names:
                    sub = f"{target}.{alias.name}"
                    if _is_module(sub):
                        found.append((sub, nested, child.lineno))
            visit(child, inner)

    visit(tree, False)
    return found


def _is_module(name: str) -> bool:
    if not name.startswith("scrofazero"):
        return False
    rel = Path(*name.split("."))
    return (ROOT / rel).with_suffix(".py").is_file() or (ROOT / rel / "__init__.py").is_file()


def graph() -> dict[str, list[tuple[str, bool, int]]]:
    return {module_name(p): imports_of(p) for p in sorted(PACKAGE.rglob("*.py"))}


def layering_errors(edges: dict[str, list[tuple[str, bool, int]]]) -> list[str]:
    """Every broken rule of the module docstring, as readable lines (empty: all hold)."""
    errors = []
    for module, imported in edges.items():
        home, layer = layer_of(module)
        for target, nested, line in imported:
            if nested and not any(_within(target, ok) for ok in LAZY_OK):
                errors.append(f"{module}:{line} imports {target} inside a function")
            if not _within(target, "scrofazero") or target == "scrofazero":
                continue
            target_home, target_layer = layer_of(target)
            if target_layer > layer:
                errors.append(f"{module}:{line} imports {target} from a layer above")
            elif target_layer == layer and target_home != home:
                errors.append(f"{module}:{line} imports {target}, a sibling of its layer")
            if _within(module, "scrofazero.games"):
                own = ".".join(module.split(".")[:3])
                if not _within(target, own):
                    errors.append(f"{module}:{line}: the rules of a game import {target}")
            if any(_within(module, s) for s in GONGZHU_STACK) and any(
                    _within(target, s) for s in SIDE_GAMES):
                errors.append(f"{module}:{line}: the Gongzhu stack imports a side game ({target})")
            side = [s for s in SIDE_GAMES[:2] if _within(module, s) or _within(target, s)]
            if len(side) == 2:
                errors.append(f"{module}:{line}: a side game imports another ({target})")
    return errors + cycle_errors(edges)


def cycle_errors(edges: dict[str, list[tuple[str, bool, int]]]) -> list[str]:
    """One line per import cycle found by a depth-first search over module imports."""
    succ = {m: sorted({t for t, _, _ in imported if t in edges and t != m})
            for m, imported in edges.items()}
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []
    errors = []

    def dfs(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in succ[m]:
            if state.get(t) == 1:
                # a package's __init__ importing its own submodules is not a cycle of layering
                cycle = stack[stack.index(t):] + [t]
                if not all(_within(x, cycle[0]) for x in cycle):
                    errors.append("import cycle: " + " -> ".join(cycle))
            elif t not in state:
                dfs(t)
        stack.pop()
        state[m] = 2

    for m in sorted(succ):
        if m not in state:
            dfs(m)
    return errors


def test_package_layering_holds():
    errors = layering_errors(graph())
    assert not errors, "\n".join(errors)


def test_every_module_has_a_layer_and_imports_resolve():
    edges = graph()
    assert len(edges) > 60
    for module, imported in edges.items():
        layer_of(module)
        for target, _, line in imported:
            if _within(target, "scrofazero") and target not in edges:
                # `from scrofazero.x import name` where name is not a module is fine
                assert _is_module(target.rsplit(".", 1)[0]), f"{module}:{line} imports {target}"


@pytest.mark.parametrize("edges,needle", [
    ({"scrofazero.games.gongzhu.rules": [("scrofazero.nn.network", False, 3)],
      "scrofazero.nn.network": []}, "from a layer above"),
    ({"scrofazero.fish.players": [("scrofazero.tiny_crew.exact", False, 5)],
      "scrofazero.tiny_crew.exact": []}, "a side game imports another"),
    ({"scrofazero.tiny_crew.exact": [("scrofazero.fish.match", False, 5)],
      "scrofazero.fish.match": []}, "a side game imports another"),
    ({"scrofazero.fish.match": [("scrofazero.nn.network", False, 5)],
      "scrofazero.nn.network": []}, "a sibling of its layer"),
    ({"scrofazero.agents.raw_net": [("scrofazero.games.fish.rules", False, 9)],
      "scrofazero.games.fish.rules": []}, "the Gongzhu stack imports a side game"),
    ({"scrofazero.games.fish.rules": [("scrofazero.games.gongzhu.cards", False, 1)],
      "scrofazero.games.gongzhu.cards": []}, "the rules of a game import"),
    ({"scrofazero.nn.a": [("scrofazero.nn.b", False, 1)],
      "scrofazero.nn.b": [("scrofazero.search.c", False, 1)],
      "scrofazero.search.c": [("scrofazero.nn.a", False, 1)]}, "import cycle"),
    ({"scrofazero.eval.arena": [("scrofazero.agents.base", True, 7)],
      "scrofazero.agents.base": []}, "inside a function"),
])
def test_checker_catches_each_kind_of_violation(edges, needle):
    errors = layering_errors(edges)
    assert any(needle in e for e in errors), errors


def test_checker_accepts_a_clean_graph():
    edges = {"scrofazero.train.loop": [("scrofazero.nn.network", False, 1),
                                       ("torch", False, 2)],
             "scrofazero.nn.network": [("torch", False, 1)],
             "scrofazero.tiny_crew.train": [("scrofazero.openspiel", True, 4)],
             "scrofazero.openspiel": []}
    assert layering_errors(edges) == []


def test_tests_mirror_the_package():
    for folder in sorted(p for p in (ROOT / "tests").iterdir() if p.is_dir()):
        if folder.name in ("helpers", "data", "__pycache__"):  # shared code and recorded data
            continue
        for sub in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
            if sub.name == "__pycache__":
                continue
            rel = sub.relative_to(ROOT / "tests")
            assert (PACKAGE / rel).is_dir(), f"tests/{rel} has no package folder scrofazero/{rel}"
