"""The folders are the architecture (docs/architecture.md): every import in the package,
at module level or inside a function, relative or absolute, goes where LAYERS allows.

Two modules are outside the layers, on purpose:
- `elelem_daemon/__init__.py` is the public surface: it names what plugin authors use,
  from whichever layer defines it (the terminal's Output and Input included), each
  imported on first use;
- the launcher (`cli.py`, `__main__.py`) parses the command line and starts one face,
  so it may import every face, but only inside the function that starts it: a face's
  start-up then pays for no other (checked below).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "elelem_daemon"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

# A module's layer: the longest prefix of its dotted name found here. The package's root
# holds the core's nouns (agent, session, conversation, ...); every other concern is a
# folder, and a folder is one layer.
WHERE = {
    PACKAGE: "core",
    f"{PACKAGE}.__init__": "surface",
    f"{PACKAGE}.cli": "launcher",
    f"{PACKAGE}.__main__": "launcher",
    f"{PACKAGE}.base": "base",
    f"{PACKAGE}.safety": "safety",
    f"{PACKAGE}.processes": "processes",
    f"{PACKAGE}.turns": "turns",
    f"{PACKAGE}.edits": "core",  # the session's Files and Seen; a change asks its Input
    f"{PACKAGE}.context": "core",
    f"{PACKAGE}.control": "control",
    f"{PACKAGE}.builtins": "builtins",
    f"{PACKAGE}.providers": "providers",
    f"{PACKAGE}.store": "store",
    f"{PACKAGE}.checkpoints": "checkpoints",
    f"{PACKAGE}.mcp": "mcp",
    f"{PACKAGE}.jsonrpc": "jsonrpc",
    f"{PACKAGE}.faces": "faces",
    f"{PACKAGE}.faces.terminal": "terminal",
    f"{PACKAGE}.faces.daemon": "daemon",
    f"{PACKAGE}.faces.acp": "acp",
    f"{PACKAGE}.faces.lsp": "lsp",
}
EVERY = {
    "base",
    "safety",
    "processes",
    "turns",
    "core",
    "control",
    "builtins",
    "providers",
    "store",
    "checkpoints",
    "mcp",
    "jsonrpc",
    "faces",
    "terminal",
    "daemon",
    "acp",
    "lsp",
}
# What each layer may import (besides itself), from the bottom up. The core keeps
# sessions on disk through store/ (session.start); store/ and jsonrpc/ know the core's
# nouns and errors; a face builds on the core and the edges it needs, and never on
# another face.
BELOW_CORE = {"base", "safety", "processes", "turns"}
LAYERS: dict[str, set[str]] = {
    "base": set(),  # plumbing: errors, jsonsafe, log, config, keys
    "safety": {"base"},
    "processes": {"base"},
    "turns": {"base"},
    "core": BELOW_CORE | {"store"},
    "control": BELOW_CORE | {"core"},  # live, rewind, editing: what is done to a session
    "builtins": BELOW_CORE | {"core", "control", "mcp", "checkpoints"},  # mcp.py,
    # checkpoints.py: engines as plugins
    "providers": BELOW_CORE | {"core"},
    "store": BELOW_CORE | {"core"},
    "checkpoints": BELOW_CORE | {"core"},  # imported by builtins/checkpoints.py alone
    "mcp": BELOW_CORE | {"core"},  # MCP servers: the SDK, processes, tools; via builtins/mcp.py
    "jsonrpc": BELOW_CORE | {"core"},
    "faces": set(),
    "terminal": BELOW_CORE | {"core", "control", "store"},
    "daemon": BELOW_CORE | {"core", "control", "store", "jsonrpc", "mcp"},  # mcp: mcpServers
    "acp": BELOW_CORE | {"core", "control", "store", "jsonrpc", "mcp"},
    "lsp": BELOW_CORE | {"core", "control", "store", "jsonrpc"},  # pygls's own LanguageServer
    "surface": EVERY,
    "launcher": EVERY,
}
FACES = {"terminal", "daemon", "acp", "lsp"}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the module imported
    line: int
    nested: bool  # inside a function (imported when it runs)


def layer(module: str) -> str:
    best = max(
        (prefix for prefix in WHERE if module == prefix or module.startswith(prefix + ".")), key=len
    )
    return WHERE[best]


def modules(root: Path, package: str = PACKAGE) -> dict[str, tuple[str, bool]]:
    """Every module under root: dotted name -> (source, is a package's __init__)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join((package, *(parts[:-1] if is_package else parts)))
        found[f"{name}.__init__" if is_package and name == package else name] = (
            path.read_text(encoding="utf-8"),
            is_package,
        )
    return found


def imports(tree: dict[str, tuple[str, bool]], package: str = PACKAGE) -> list[Import]:
    """Every import of a package module by a package module, resolved to its target."""
    found = []
    for module, (source, is_package) in tree.items():
        name = package if module == f"{package}.__init__" else module
        here = name if is_package else name.rpartition(".")[0]
        parsed = ast.parse(source)
        inside = {
            id(node)
            for fn in ast.walk(parsed)
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
            for node in ast.walk(fn)
        }
        for node in ast.walk(parsed):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                start = node.module or ""
                if node.level:
                    parts = here.split(".")
                    base = parts[: len(parts) - (node.level - 1)]
                    start = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:  # `from . import saved` imports the module saved
                    sub = f"{start}.{alias.name}"
                    targets.append(sub if sub in tree else start)
            for target in targets:
                if target == package or target.startswith(package + "."):
                    found.append(Import(module, target, node.lineno, id(node) in inside))
    return found


def violations(tree: dict[str, tuple[str, bool]], package: str = PACKAGE) -> list[str]:
    """One line per import LAYERS does not allow."""
    problems = []
    for i in sorted(imports(tree, package), key=lambda i: (i.module, i.line)):
        mine, theirs = layer(i.module), layer(i.target)
        if mine != theirs and theirs not in LAYERS[mine]:
            problems.append(f"{i.module}:{i.line} ({mine}) imports {i.target} ({theirs})")
        if mine == "launcher" and theirs in FACES and not i.nested:
            problems.append(f"{i.module}:{i.line} imports the face {i.target} at module level")
    return problems


def test_every_import_follows_the_layers() -> None:
    tree = modules(ROOT)
    assert len(tree) > 50 and all(layer(m) in LAYERS for m in tree)
    assert violations(tree) == []


def test_the_root_holds_the_nouns_and_every_folder_is_a_layer() -> None:
    root = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(root) <= 16, root
    folders = sorted(p.parent for p in ROOT.rglob("__init__.py") if p.parent != ROOT)
    for folder in folders:
        dotted = ".".join((PACKAGE, *folder.relative_to(ROOT).parts))
        assert any(
            dotted == prefix or dotted.startswith(prefix + ".")
            for prefix in WHERE
            if prefix != PACKAGE
        ), dotted
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")))
        assert doc and doc.strip(), f"{folder}/__init__.py says what the folder is for"


def test_the_layers_form_a_dag() -> None:
    """No two layers may import each other, directly or through others; the one known
    pair is the core and store/ (session.start attaches the recorder, inside start)."""
    known = {frozenset({"core", "store"})}
    allowed = {k: v for k, v in LAYERS.items() if k not in {"surface", "launcher"}}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in allowed[start] - seen:
            if nxt == goal or reaches(nxt, goal, seen | {nxt}):
                return True
        return False

    cycles = {
        frozenset({a, b})
        for a in allowed
        for b in allowed[a]
        if reaches(b, a, {b}) and frozenset({a, b}) not in known
    }
    assert cycles == set()
    assert all(LAYERS[low] <= {"base"} for low in BELOW_CORE)


def test_the_walk_sees_every_kind_of_import() -> None:
    found = {(i.module, i.target, i.nested) for i in imports(modules(ROOT))}
    assert (f"{PACKAGE}.edits.changes", f"{PACKAGE}.ports", False) in found  # TYPE_CHECKING
    assert (f"{PACKAGE}.faces.daemon.daemon", f"{PACKAGE}.faces.daemon.saved", False) in found
    assert (f"{PACKAGE}.session", f"{PACKAGE}.store.recorder", True) in found  # in start()
    assert (f"{PACKAGE}.cli", f"{PACKAGE}.faces.acp", True) in found
    assert (f"{PACKAGE}.jsonrpc.client", f"{PACKAGE}.jsonrpc.errors", False) in found


def synthetic(files: dict[str, str]) -> dict[str, tuple[str, bool]]:
    """A made-up package laid out like ours, from {path: source}."""
    return {
        (PACKAGE + "." + path.removesuffix(".py").replace("/", ".")).removesuffix(".__init__")
        if path != "__init__.py"
        else f"{PACKAGE}.__init__": (source, path.endswith("__init__.py"))
        for path, source in files.items()
    }


def test_a_face_importing_another_face_fails() -> None:
    tree = synthetic(
        {
            "__init__.py": "",
            "session.py": "",
            "faces/__init__.py": "",
            "faces/acp/__init__.py": "",
            "faces/acp/server.py": "from ..daemon.daemon import Daemon\n",
            "faces/daemon/__init__.py": "",
            "faces/daemon/daemon.py": "def late():\n    import elelem_daemon.faces.terminal.repl\n",
            "faces/terminal/__init__.py": "",
            "faces/terminal/repl.py": "from ...session import Session\n",
        }
    )
    assert violations(tree) == [
        f"{PACKAGE}.faces.acp.server:1 (acp) imports {PACKAGE}.faces.daemon.daemon (daemon)",
        f"{PACKAGE}.faces.daemon.daemon:2 (daemon) imports "
        f"{PACKAGE}.faces.terminal.repl (terminal)",
    ]


def test_the_core_importing_a_face_or_the_wire_fails() -> None:
    tree = synthetic(
        {
            "__init__.py": "from .faces.acp import serve\n",  # the surface may
            "agent.py": "from .faces.terminal import repl\n",
            "session.py": "def f():\n    from .jsonrpc.errors import RpcError\n",
            "cli.py": "from .faces.daemon.stdio import serve\n",  # the launcher: only lazily
            "faces/__init__.py": "",
            "faces/acp/__init__.py": "",
            "faces/daemon/__init__.py": "",
            "faces/daemon/stdio.py": "",
            "faces/terminal/__init__.py": "",
            "faces/terminal/repl.py": "",
            "jsonrpc/__init__.py": "",
            "jsonrpc/errors.py": "",
        }
    )
    assert violations(tree) == [
        f"{PACKAGE}.agent:1 (core) imports {PACKAGE}.faces.terminal.repl (terminal)",
        f"{PACKAGE}.cli:1 imports the face {PACKAGE}.faces.daemon.stdio at module level",
        f"{PACKAGE}.session:2 (core) imports {PACKAGE}.jsonrpc.errors (jsonrpc)",
    ]


def test_an_upward_import_fails_types_included(tmp_path: Path) -> None:
    """A real tree on disk, read by the same walk: a lower layer naming a higher one,
    at module level, inside a function, or only for the type checker, fails."""
    files = {
        "__init__.py": "",
        "session.py": "from .turns.modes import Modes\n",  # the core on a lower layer: fine
        "ports.py": "class SessionView: ...\n",
        "base/__init__.py": '"""Plumbing."""\n',
        "base/config.py": "from ..safety.trust import decide\n",
        "base/log.py": "",
        "safety/__init__.py": '"""Safety."""\n',
        "safety/trust.py": "from ..base.log import notice\ndef decide():\n"
        "    from ..control.live import Live\n",
        "turns/__init__.py": '"""Turns."""\n',
        "turns/modes.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from ..ports import SessionView\n",
        "control/__init__.py": '"""Control."""\n',
        "control/live.py": "from ..session import Session\n",  # above the core: fine
    }
    for path, source in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(source, encoding="utf-8")
    assert violations(modules(tmp_path)) == [
        f"{PACKAGE}.base.config:1 (base) imports {PACKAGE}.safety.trust (safety)",
        f"{PACKAGE}.safety.trust:3 (safety) imports {PACKAGE}.control.live (control)",
        f"{PACKAGE}.turns.modes:3 (turns) imports {PACKAGE}.ports (core)",
    ]
