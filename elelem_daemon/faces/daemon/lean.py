"""Lean: pygls's JSON-RPC engine, imported without its LSP half. The one module importing pygls.

pygls 2.1 is two things: a JSON-RPC engine (`pygls.server.JsonRPCServer`,
`pygls.protocol.json_rpc.JsonRPCProtocol`) and a language server built on it. The
engine's modules import a few names from `lsprotocol.types` (json_rpc.py: two method
names and the two error-response classes; exceptions.py: `ResponseError`; pygls.lsp,
which feature_manager.py imports: a dozen LSP method names and option classes for a
table the daemon never reads), and `pygls.protocol`'s package `__init__` imports the
whole language server. `lsprotocol.types` builds ~550 attrs classes: with the rest of
the LSP half, ~17 MB of RSS and most of pygls's ~0.5 s import, for a daemon that speaks
no LSP.

`load()` imports the engine with two things in `sys.modules` while it does:
- `lsprotocol.types` is `stand_in()`: the names the engine imports, with the same
  values (the method names; `METHOD_TO_TYPES` and `ALL_TYPES_MAP` empty: pygls reads
  them only for a feature registered with options, and the daemon registers none),
  and `ResponseError`, `ResponseErrorMessage` as attrs classes with the real ones'
  fields, defaults and validators;
- `pygls.protocol` is a bare package (its directory, without its `__init__`).
Then every module it added goes back out of `sys.modules` (the engine keeps its own
references), so any later `import pygls` or `import lsprotocol` in the process gets the
real, whole packages (the top `pygls` package, two constants, stays). If either was
imported before, `load()` imports the real engine. The stand-ins are in `sys.modules`
only for the import itself (early.py runs it in a thread); nothing else in the daemon
imports lsprotocol.

`converter()` stands in for `pygls.protocol.default_converter()` (lsprotocol's
converter): camelCase renames, defaults omitted, ids and `data` passed through as they
are. tests/faces/daemon/test_lean.py holds the stand-ins to the real ones: the names pygls
imports, the values, and what the engine does with them (structuring a client's error
response, an exception's `ResponseError`). pyproject.toml pins the pygls and
lsprotocol versions those tests passed against.
"""

import importlib
import importlib.util
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Optional, Union

ID = Optional[Union[int, str]]  # noqa: UP007 - the real annotation, for cattrs' hooks

ENGINE = ("pygls.exceptions", "pygls.protocol.json_rpc", "pygls.server")


@dataclass(frozen=True)
class Engine:
    """pygls's JSON-RPC modules, as `load()` imported them."""

    exceptions: ModuleType
    json_rpc: ModuleType
    server: ModuleType
    lean: bool  # True: with the stand-ins; False: the real packages were there already

    def converter(self) -> Any:
        """The converter for this engine's messages: `converter()` for the lean one,
        pygls' own default (lsprotocol's) for the real one."""
        if self.lean:
            return converter()
        return importlib.import_module("pygls.protocol").default_converter()


def stand_in() -> ModuleType:
    """A fresh `lsprotocol.types` stand-in (see the module's docstring)."""
    import attrs

    types = ModuleType("lsprotocol.types", "elelem's stand-in: only what pygls's engine imports")

    def integer(instance: Any, attribute: Any, value: Any) -> None:
        # lsprotocol.validators.integer_validator: an LSP integer, a signed 32-bit int
        if not isinstance(value, int) or not -(2**31) <= value <= 2**31 - 1:
            raise ValueError(
                f"{type(instance).__qualname__}.{attribute.name} should be in range "
                f"[{-(2**31)}:{2**31 - 1}], but was {value}."
            )

    @attrs.define
    class ResponseError:
        code: int = attrs.field(validator=integer)
        message: str = attrs.field(validator=attrs.validators.instance_of(str))
        data: Any = attrs.field(default=None)

    @attrs.define
    class ResponseErrorMessage:
        id: ID = attrs.field(default=None)
        error: Optional[ResponseError] = attrs.field(default=None)  # noqa: UP007
        jsonrpc: str = attrs.field(default="2.0")

    class Unused:
        """An LSP option class pygls.lsp names in a table the daemon never reads."""

    for cls in (ResponseError, ResponseErrorMessage):
        cls.__module__, cls.__qualname__ = types.__name__, cls.__name__
    names: dict[str, Any] = {
        "ResponseError": ResponseError,
        "ResponseErrorMessage": ResponseErrorMessage,
        "CANCEL_REQUEST": "$/cancelRequest",
        "EXIT": "exit",
        "TEXT_DOCUMENT_DID_SAVE": "textDocument/didSave",
        "TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL": "textDocument/semanticTokens/full",
        "TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA": "textDocument/semanticTokens/full/delta",
        "TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE": "textDocument/semanticTokens/range",
        "WORKSPACE_DID_CREATE_FILES": "workspace/didCreateFiles",
        "WORKSPACE_DID_DELETE_FILES": "workspace/didDeleteFiles",
        "WORKSPACE_DID_RENAME_FILES": "workspace/didRenameFiles",
        "WORKSPACE_WILL_CREATE_FILES": "workspace/willCreateFiles",
        "WORKSPACE_WILL_DELETE_FILES": "workspace/willDeleteFiles",
        "WORKSPACE_WILL_RENAME_FILES": "workspace/willRenameFiles",
        "METHOD_TO_TYPES": {},
        "ALL_TYPES_MAP": {},
    }
    for name in (
        "FileOperationRegistrationOptions",
        "SaveOptions",
        "SemanticTokensLegend",
        "SemanticTokensRegistrationOptions",
        "ShowDocumentResult",
    ):
        names[name] = type(name, (Unused,), {"__module__": types.__name__})
    types.__dict__.update(names)
    return types


def bare_package(name: str) -> ModuleType:
    """The package `name` with its directory as its path, its `__init__` not run."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError(f"no package {name}")
    package = ModuleType(name)
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__ = spec
    package.__package__ = name
    return package


def load() -> Engine:
    """Import pygls's JSON-RPC engine; lean (the stand-ins) unless pygls's protocol or
    lsprotocol's types are imported already."""
    if "lsprotocol.types" in sys.modules or "pygls.protocol" in sys.modules:
        exceptions, json_rpc, server = (importlib.import_module(name) for name in ENGINE)
        return Engine(exceptions, json_rpc, server, lean=False)
    before = set(sys.modules)
    sys.modules["lsprotocol.types"] = stand_in()
    try:
        sys.modules["pygls.protocol"] = bare_package("pygls.protocol")
        exceptions = importlib.import_module("pygls.exceptions")
        json_rpc = importlib.import_module("pygls.protocol.json_rpc")
        protocol = sys.modules["pygls.protocol"]
        # what pygls.server imports from the package
        protocol.JsonRPCProtocol = json_rpc.JsonRPCProtocol  # type: ignore[attr-defined]
        server = importlib.import_module("pygls.server")
        resolved(json_rpc)
    finally:
        for name in set(sys.modules) - before:
            if name.startswith(("pygls.", "lsprotocol")):
                module = sys.modules.pop(name)
                parent, _, child = name.rpartition(".")
                if getattr(sys.modules.get(parent), child, None) is module:
                    delattr(sys.modules[parent], child)
    return Engine(exceptions, json_rpc, server, lean=True)


def resolved(module: ModuleType) -> None:
    """Resolve the string annotations of the module's attrs classes now, while it is in
    `sys.modules` (cattrs resolves them through it, on first use)."""
    import attrs

    for value in vars(module).values():
        if isinstance(value, type) and attrs.has(value) and value.__module__ == module.__name__:
            attrs.resolve_types(value)


def converter() -> Any:
    """A cattrs converter doing what lsprotocol's does to the engine's messages."""
    import attrs
    import cattrs
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

    conv = cattrs.Converter()

    def camel(name: str) -> str:
        parts = (name[:-1] if name.endswith("_") else name).split("_")
        return parts[0] + "".join(part.title() for part in parts[1:])

    def kept(cls: type, name: str) -> bool:  # lsprotocol's "special" properties: never omitted
        return cls.__name__ == "ResponseErrorMessage" and name in ("error", "jsonrpc")

    def overrides(cls: type) -> dict[str, Any]:
        return {
            a.name: override(rename=camel(a.name), omit_if_default=not kept(cls, a.name))
            for a in attrs.fields(cls)
        }

    for passed in (type(None), ID, Union[int, str]):  # noqa: UP007
        conv.register_structure_hook(passed, lambda obj, _: obj)
    conv.register_unstructure_hook_factory(
        attrs.has, lambda cls: make_dict_unstructure_fn(cls, conv, **overrides(cls))
    )
    conv.register_structure_hook_factory(
        attrs.has, lambda cls: make_dict_structure_fn(cls, conv, **overrides(cls))
    )
    return conv
