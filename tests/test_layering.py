"""The package's import layering (docs/layout.md, "Layering").

Invariants: every module imports only modules of its own layer or below (the table LAYERS, bottom
first); `games` imports nothing else of the package and no game's rules import another game's; the
Gongzhu stack never imports a side game; the side games never import each other; there is no import
cycle between modules; imports inside functions are only of the optional OpenSpiel dependency; the
tests folder mirrors the package. Within the table server, `serve.common` imports no other part of
`serve`, each game's folder (`serve.gongzhu`, `serve.fish`) imports only itself and `serve.common`,
and no module of `serve` imports another's private (`_name`) names. No file of the tests imports a
test module (what tests share lives in a conftest.py or in tests/helpers/), nor a helper as
`tests.helpers.x` (beside `x`, that would load it twice). The checkers themselves are tested on
small made-up inputs, so that a broken checker cannot pass silently.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "scrofazero"
TESTS = ROOT / "tests"

# Bottom first: a module may import its own layer's packages and those below. Packages that share
# a layer may not import each other, except within the same package; nor may the side games.
LAYERS = [
    ("scrofazero.atomic", 0),
    ("scrofazero.run_lock", 0),
    ("scrofazero.settings", 0),  # what a setting may hold, and its check
    ("scrofazero.shipped", 0),  # where the shipped networks lie
    ("scrofazero.games", 0),  # rules only
    ("scrofazero.cluster", 1),  # Ray (imported only inside its functions) and RayConfig
    ("scrofazero.search", 1),  # knows games only through its protocols
    ("scrofazero.runs", 2),  # the run harness every trainer runs under, TrainRootConfig
    ("scrofazero.nn", 3),
    ("scrofazero.fish", 3),  # a side game: the shared base and its rules, no Gongzhu stack
    ("scrofazero.sampling", 4),
    ("scrofazero.agents", 5),
    ("scrofazero.eval", 6),
    ("scrofazero.train", 7),
    ("scrofazero.config", 8),
    ("scrofazero.openspiel", 9),
    ("scrofazero.pettingzoo", 9),  # the optional [pettingzoo] extra
    ("scrofazero.tiny_crew", 10),  # above openspiel: its optional MCCFR uses OpenSpiel's game
    ("scrofazero.serve", 11),  # the table server (play.py): hosts Gongzhu and Fish tables
    ("scrofazero.entry", 12),  # the entry points' table
]
GONGZHU_STACK = ("scrofazero.search", "scrofazero.nn", "scrofazero.sampling", "scrofazero.agents",
                 "scrofazero.eval", "scrofazero.train", "scrofazero.config")
SIDE_GAMES = ("scrofazero.tiny_crew", "scrofazero.fish", "scrofazero.games.tiny_crew",
              "scrofazero.games.fish")
# The table server's parts: the base both games use, and one folder per game above it (serve's
# top-level modules, app.py's factory among them, sit above all of these).
SERVE_BASE = "scrofazero.serve.common"
SERVE_GAMES = ("scrofazero.serve.gongzhu", "scrofazero.serve.fish")
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
            errors.extend(serve_errors(module, target, line))
    return errors + cycle_errors(edges)


def serve_errors(module: str, target: str, line: int) -> list[str]:
    """The server's own layering: common below both games' folders, the games apart."""
    if not _within(target, "scrofazero.serve") or target == "scrofazero.serve":
        return []
    if _within(module, SERVE_BASE) and not _within(target, SERVE_BASE):
        return [f"{module}:{line}: the server's common base imports {target}"]
    for game in SERVE_GAMES:
        if _within(module, game) and not (_within(target, game) or _within(target, SERVE_BASE)):
            other = any(_within(target, g) for g in SERVE_GAMES)
            return [f"{module}:{line}: " + (f"a game's server imports another game's ({target})"
                                            if other else f"a game's server imports {target}, "
                                            "neither its own nor the common base")]
    return []


def private_names(path: Path) -> list[tuple[str, str, int]]:
    """(module, name, line) of every private name (`_x`, not `__x__`) that `path` imports from
    a module of the package (relative imports resolved as in imports_of)."""
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            found.extend((target, a.name, node.lineno) for a in node.names
                         if a.name.startswith("_") and not a.name.startswith("__"))
    return found


def private_import_errors(names: dict[str, list[tuple[str, str, int]]]) -> list[str]:
    """One line per private name a module of the server imports from another module. (Only the
    server is held to this; elsewhere the package still has a few such imports.)"""
    return [f"{module}:{line} imports the private {name} of {target}"
            for module, imported in names.items() if _within(module, "scrofazero.serve")
            for target, name, line in imported
            if name.startswith("_") and not name.startswith("__")
            and _within(target, "scrofazero") and target != module]


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


def test_no_module_of_the_server_imports_another_ones_private_names():
    names = {module_name(p): private_names(p) for p in sorted(PACKAGE.rglob("*.py"))}
    errors = private_import_errors(names)
    assert not errors, "\n".join(errors)


def test_the_server_has_a_common_base_and_one_folder_per_game():
    edges = graph()
    for part in (SERVE_BASE, *SERVE_GAMES):
        assert part in edges, f"{part} is missing: the server's layering test checks nothing"


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
    ({"scrofazero.serve.common.sockets": [("scrofazero.serve.gongzhu.protocol", False, 3)],
      "scrofazero.serve.gongzhu.protocol": []}, "the server's common base imports"),
    ({"scrofazero.serve.common.pages": [("scrofazero.serve.app", False, 3)],
      "scrofazero.serve.app": []}, "the server's common base imports"),
    ({"scrofazero.serve.fish.hub": [("scrofazero.serve.gongzhu.hub", False, 3)],
      "scrofazero.serve.gongzhu.hub": []}, "a game's server imports another game's"),
    ({"scrofazero.serve.gongzhu.routes": [("scrofazero.serve.fish.records", False, 3)],
      "scrofazero.serve.fish.records": []}, "a game's server imports another game's"),
    ({"scrofazero.serve.gongzhu.hub": [("scrofazero.serve.app", False, 3)],
      "scrofazero.serve.app": []}, "neither its own nor the common base"),
])
def test_checker_catches_each_kind_of_violation(edges, needle):
    errors = layering_errors(edges)
    assert any(needle in e for e in errors), errors


@pytest.mark.parametrize("names,caught", [
    ({"scrofazero.serve.fish.records": [("scrofazero.serve.common.records", "_now", 3)]}, True),
    ({"scrofazero.serve.app": [("scrofazero.serve.gongzhu.hub", "_decide", 9)]}, True),
    ({"scrofazero.serve.app": [("scrofazero.serve.gongzhu.hub", "__version__", 9)]}, False),
    ({"scrofazero.serve.app": [("typing", "_T", 9)]}, False),
    ({"scrofazero.train.loop": [("scrofazero.nn.network", "_x", 2)]}, False),
])
def test_checker_catches_a_private_import_of_the_server(names, caught):
    errors = private_import_errors(names)
    assert bool(errors) == caught, errors


def test_checker_accepts_a_clean_graph():
    edges = {"scrofazero.train.loop": [("scrofazero.nn.network", False, 1),
                                       ("torch", False, 2)],
             "scrofazero.nn.network": [("torch", False, 1)],
             "scrofazero.tiny_crew.train": [("scrofazero.openspiel", True, 4)],
             "scrofazero.openspiel": [],
             "scrofazero.serve.app": [("scrofazero.serve.gongzhu.routes", False, 1),
                                      ("scrofazero.serve.fish.routes", False, 2)],
             "scrofazero.serve.gongzhu.routes": [("scrofazero.serve.common.web", False, 1),
                                                 ("scrofazero.serve.gongzhu.hub", False, 2)],
             "scrofazero.serve.fish.routes": [("scrofazero.serve.common.sockets", False, 1)],
             "scrofazero.serve.gongzhu.hub": [], "scrofazero.serve.common.web": [],
             "scrofazero.serve.common.sockets": []}
    assert layering_errors(edges) == []


def imports_of_tests(source: str, where: str) -> list[str]:
    """One line per import in `source` (the text of file `where` under tests/) of a test module
    (`test_x`, `tests.serve.test_x`, `from . import test_x`), or of a helper by its path as a
    package (`tests.helpers.x`)."""
    errors = []
    for node in ast.walk(ast.parse(source, filename=where)):
        if isinstance(node, ast.Import):
            named = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            named = [module] + [f"{module}.{alias.name}".lstrip(".") for alias in node.names
                                if alias.name.startswith("test_")]
        else:
            continue
        for name in named:
            if any(part.startswith("test_") for part in name.split(".")):
                errors.append(f"{where}:{node.lineno} imports the test module {name}: move "
                              "what it shares into a conftest.py or tests/helpers/")
            elif _within(name, "tests.helpers"):
                errors.append(f"{where}:{node.lineno} imports {name}: import a helper by its "
                              "own name, as the other tests do")
    return errors


def test_no_test_imports_another():
    errors = []
    for path in sorted(TESTS.rglob("*.py")):
        errors += imports_of_tests(path.read_text(), str(path.relative_to(ROOT)))
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("source,caught", [
    ("from test_browser import server", True),
    ("import test_messages", True),
    ("def f():\n    from test_messages import doc_table", True),
    ("from tests.serve.test_browser import play", True),
    ("from . import test_browser", True),
    ("from tests.helpers.composed import config", True),
    ("from composed import config", False),
    ("from browser_table import play_out_the_hand", False),
    ("from scrofazero.serve.common.messages import Join", False),
    ("import pytest", False),
])
def test_checker_catches_a_test_importing_a_test(source, caught):
    errors = imports_of_tests(source, "tests/serve/test_x.py")
    assert bool(errors) == caught, errors


def test_tests_mirror_the_package():
    for folder in sorted(p for p in (ROOT / "tests").iterdir() if p.is_dir()):
        if folder.name in ("helpers", "data", "__pycache__"):  # shared code and recorded data
            continue
        for sub in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
            if sub.name == "__pycache__":
                continue
            rel = sub.relative_to(ROOT / "tests")
            assert (PACKAGE / rel).is_dir(), f"tests/{rel} has no package folder scrofazero/{rel}"
