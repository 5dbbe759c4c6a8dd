"""lean.py's stand-ins against the real pygls and lsprotocol.

The lean engine is pygls's JSON-RPC modules imported with a stand-in `lsprotocol.types`
(faces/daemon/lean.py). These tests fail when pygls's engine imports a name the
stand-in lacks, when a stand-in value differs from the real one, or when the stand-in
classes and converter behave differently from lsprotocol's for what pygls does with
them: structuring a client's error response, unstructuring a request, an exception's
`ResponseError` and back. Each `load()` runs in a fresh interpreter, since it depends
on what the process imported before.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from elelem_daemon.faces.daemon import lean

ROOT = Path(__file__).resolve().parents[3]


def fresh(code: str) -> Any:
    """Run `code` in a new interpreter; the JSON it prints last."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


RECORD = """
import importlib.abc, json, sys
seen = []
class Record(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        seen.append(name)
sys.meta_path.insert(0, Record())
from elelem_daemon.faces.daemon import lean
engine = lean.load()
sys.meta_path.pop(0)
"""


def test_the_engine_loads_without_lsprotocol_and_leaves_no_stand_in_behind() -> None:
    out = fresh(
        RECORD
        + """
left = sorted(n for n in sys.modules if n.startswith(("pygls.", "lsprotocol")))
import lsprotocol.types, pygls.protocol  # the real ones, whole, after
print(json.dumps({
    "lean": engine.lean,
    "left": left,
    "found": [n for n in seen if n.startswith("lsprotocol")],
    "real": hasattr(lsprotocol.types, "InitializeParams"),
    "lsp": hasattr(pygls.protocol, "LanguageServerProtocol"),
    "ours": engine.json_rpc.ResponseError is lsprotocol.types.ResponseError,
}))
"""
    )
    assert out == {
        "lean": True,
        "left": [],  # every module it added is out of sys.modules again
        "found": [],  # lsprotocol was never looked for, let alone imported
        "real": True,  # a later import gets the real package
        "lsp": True,
        "ours": False,
    }


def test_with_lsprotocol_imported_already_the_engine_is_the_real_one() -> None:
    out = fresh(
        """
import json, sys, lsprotocol.types
from elelem_daemon.faces.daemon import lean
engine = lean.load()
lean.converter = None  # the real engine takes pygls's own converter, not the stand-in's
error = engine.converter().structure(
    {"id": 1, "jsonrpc": "2.0", "error": {"code": 1, "message": "m"}},
    lsprotocol.types.ResponseErrorMessage,
)
print(json.dumps({
    "lean": engine.lean,
    "same": engine.json_rpc is sys.modules["pygls.protocol.json_rpc"],
    "real": engine.json_rpc.ResponseError is lsprotocol.types.ResponseError,
    "structured": type(error.error) is lsprotocol.types.ResponseError,
}))
"""
    )
    assert out == {"lean": False, "same": True, "real": True, "structured": True}


def lsprotocol_imports(path: str) -> list[tuple[str, list[str]]]:
    """Every import of lsprotocol in a source file: (module, the names it imports)."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(Path(path).read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lsprotocol"):
            found.append((node.module or "", [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.startswith("lsprotocol")]
    return found


def test_the_stand_in_has_every_name_the_engine_imports_with_the_real_values() -> None:
    modules = fresh(
        RECORD
        + """
import importlib.util
# pygls.protocol is looked up for its directory only: its __init__ never runs (the
# first test: lsprotocol, which it imports, is never looked for)
ran = [n for n in seen if n.startswith("pygls") and n != "pygls.protocol"]
files = [importlib.util.find_spec(n).origin for n in ran]
print(json.dumps(files))
"""
    )
    assert any(f.endswith("json_rpc.py") for f in modules)
    assert any(f.endswith("feature_manager.py") for f in modules)
    import lsprotocol.types as real

    stand = lean.stand_in()
    needed: set[str] = set()
    importers: dict[str, set[str]] = {}
    for path in modules:
        for module, names in lsprotocol_imports(path):
            assert module == "lsprotocol.types", f"{path} imports {module}: not stood in"
            needed |= set(names)
            for name in names:
                importers.setdefault(name, set()).add(
                    Path(path).parent.name + "/" + Path(path).name
                )
    assert needed  # pygls still imports from it: else the stand-in can go
    missing = needed - set(vars(stand))
    assert not missing, f"pygls's engine now imports {missing} from lsprotocol.types"
    for name in sorted(needed):
        ours, theirs = getattr(stand, name), getattr(real, name)
        if isinstance(theirs, str):
            assert ours == theirs, name
        elif isinstance(theirs, dict):
            assert ours == {}, name  # pygls.lsp's method tables: read for options only
            assert importers[name] == {"lsp/__init__.py"}, (name, importers[name])
        elif attrs.has(ours):
            assert [(f.name, f.default) for f in attrs.fields(ours)] == [
                (f.name, f.default) for f in attrs.fields(theirs)
            ], name
        else:  # a placeholder: an LSP option class, named only in pygls.lsp's tables
            assert isinstance(theirs, type) and isinstance(ours, type), name
            assert importers[name] == {"lsp/__init__.py"}, (name, importers[name])


def test_pygls_reads_the_lsp_tables_only_for_a_feature_registered_with_options() -> None:
    """The empty tables are never read: pygls.lsp's functions are called by
    feature_manager.py only under `if options:`, and the daemon registers none."""
    import pygls.feature_manager
    import pygls.lsp

    tree = ast.parse(Path(pygls.feature_manager.__file__).read_text())
    lsp_functions = {n for n in vars(pygls.lsp) if n.startswith(("get_method", "is_instance"))}
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name):
            if node.test.id == "options":
                guarded |= {id(inner) for inner in ast.walk(node)}
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in lsp_functions
    ]
    assert calls
    assert all(id(call) in guarded for call in calls)
    source = Path(__file__).parents[3] / "elelem_daemon/faces/daemon/wiring.py"
    assert "server.feature(method)(" in source.read_text()  # no options


def outcome(convert: Any, data: Any, cls: type) -> Any:
    try:
        value = convert(data, cls)
    except Exception as exc:  # noqa: BLE001 - the kind of failure is what is compared
        causes = getattr(exc, "exceptions", [])
        return ["error", type(exc).__name__, sorted(type(c).__name__ for c in causes)]
    return ["ok", attrs.asdict(value)]


ERRORS: list[Any] = [
    {"id": 1, "jsonrpc": "2.0", "error": {"code": -32601, "message": "no such method"}},
    {"id": "elelem-1", "jsonrpc": "2.0", "error": {"code": 1, "message": "m", "data": [1, "x"]}},
    {"id": 2, "jsonrpc": "2.0", "error": {"code": 1, "message": "m", "data": {"a": {"b": None}}}},
    {"id": 3, "jsonrpc": "2.0", "error": {"code": 1, "message": "m", "data": None}},
    {"id": None, "jsonrpc": "2.0", "error": {"code": 1, "message": "m"}},
    {"jsonrpc": "2.0", "error": {"code": 1, "message": "m"}},
    {"id": 1.5, "jsonrpc": "2.0", "error": {"code": 1, "message": "m"}},
    {"id": [1], "jsonrpc": "2.0", "error": {"code": 1, "message": "m"}},
    {"id": 4, "jsonrpc": "2.0", "error": {"code": 2**31, "message": "m"}},
    {"id": 4, "jsonrpc": "2.0", "error": {"code": -(2**31) - 1, "message": "m"}},
    {"id": 4, "jsonrpc": "2.0", "error": {"code": "-32601", "message": "m"}},
    {"id": 4, "jsonrpc": "2.0", "error": {"code": "x", "message": "m"}},
    {"id": 4, "jsonrpc": "2.0", "error": {"code": 1.5, "message": "m"}},
    {"id": 4, "jsonrpc": "2.0", "error": {"code": True, "message": "m"}},
    {"id": 4, "jsonrpc": "2.0", "error": {"code": None, "message": "m"}},
    {"id": 4, "jsonrpc": "2.0", "error": {"code": 1, "message": 7}},
    {"id": 4, "jsonrpc": "2.0", "error": {"code": 1}},
    {"id": 4, "jsonrpc": "2.0", "error": {"message": "m"}},
    {"id": 4, "jsonrpc": "2.0", "error": {}},
    {"id": 4, "jsonrpc": "2.0", "error": None},
    {"id": 4, "jsonrpc": "2.0", "error": "boom"},
    {"id": 4, "jsonrpc": "2.0", "error": [1]},
    {"id": 4, "jsonrpc": "2.0"},
    {"id": 4, "jsonrpc": "1.0", "error": {"code": 1, "message": "m", "extra": 1}, "x": 2},
    {"id": 4, "error": {"code": 1, "message": "m"}},
    {"id": 4, "jsonrpc": None, "error": {"code": 1, "message": "m"}},
]


@pytest.mark.parametrize("response", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_a_client_error_response_is_structured_as_lsprotocol_does(response: Any) -> None:
    import lsprotocol.types as real
    from pygls.protocol import default_converter

    stand = lean.stand_in()
    ours = outcome(lean.converter().structure, response, stand.ResponseErrorMessage)
    theirs = outcome(default_converter().structure, response, real.ResponseErrorMessage)
    assert ours == theirs


@pytest.mark.parametrize(
    "build",
    [
        lambda t: t.ResponseError(code=-32603, message="m"),
        lambda t: t.ResponseError(code=-32603, message="m", data={"kind": "x"}),
        lambda t: t.ResponseErrorMessage(id=1, error=t.ResponseError(code=1, message="m")),
        lambda t: t.ResponseErrorMessage(id=None, error=None),
        lambda t: t.ResponseErrorMessage(),
    ],
)
def test_the_error_classes_unstructure_as_lsprotocol_does(build: Any) -> None:
    import lsprotocol.types as real
    from pygls.protocol import default_converter

    ours = lean.converter().unstructure(build(lean.stand_in()))
    assert ours == default_converter().unstructure(build(real))


@pytest.mark.parametrize("params", [{"a": [1, {"b": None}]}, None, [1, 2], "x"])
def test_a_request_to_the_client_unstructures_as_with_lsprotocol(params: Any) -> None:
    from pygls.protocol import JsonRPCRequestMessage, default_converter

    request = JsonRPCRequestMessage(id="elelem-1", method="m", jsonrpc="2.0", params=params)
    assert lean.converter().unstructure(request) == default_converter().unstructure(request)


def test_an_exception_and_its_response_error_round_trip_as_with_the_real_classes() -> None:
    code = """
import json
from elelem_daemon.faces.daemon import lean
engine = lean.load()
import pygls.exceptions as real_exceptions, lsprotocol.types as real_types
def trip(exceptions):
    out = []
    for name in sorted(vars(exceptions)):
        cls = getattr(exceptions, name)
        if not (isinstance(cls, type) and issubclass(cls, exceptions.JsonRpcException)):
            continue
        code = -32000 if name == "JsonRpcServerError" else cls.CODE  # its own range
        for exc in (cls(message="m", code=code), cls(message="m", code=code, data={"kind": "x"})):
            error = exc.to_response_error()
            back = exceptions.JsonRpcException.from_error(error)
            out.append([name, type(error).__name__, error.code, error.message, error.data,
                        type(back).__name__, str(back), back.data])
    for code in (2**31, "x", 1.5):  # a code no LSP integer: the class's validator refuses it
        try:
            exceptions.JsonRpcException("m", code=code).to_response_error()
        except Exception as exc:
            out.append([repr(code), type(exc).__name__, str(exc)])
    for code in (-32700, -32600, -32601, -32602, -32603, -32800, -32001, 7):
        error = exceptions.ResponseError(code=code, message="m")
        back = exceptions.JsonRpcException.from_error(error)
        out.append([code, type(back).__name__, str(back), back.code])
    return out
assert engine.exceptions.ResponseError is not real_types.ResponseError
print(json.dumps([trip(engine.exceptions), trip(real_exceptions)]))
"""
    ours, theirs = fresh(code)
    assert len(ours) > 10
    assert ours == theirs
