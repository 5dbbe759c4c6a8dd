"""One name per concept (docs/architecture.md): no two classes in the package share a
name, and `Message` (a chat message) is defined once."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "elelem_daemon"


def definitions(kind: type[ast.AST]) -> dict[str, list[str]]:
    """Name -> where it is defined (`path:line`), for classes or module-level aliases."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = ast.walk(tree) if kind is ast.ClassDef else iter(tree.body)
        for node in nodes:
            where = f"{path.relative_to(ROOT.parent)}:{getattr(node, 'lineno', 0)}"
            if kind is ast.ClassDef and isinstance(node, ast.ClassDef):
                found[node.name].append(where)
            elif kind is ast.Assign and isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        found[target.id].append(where)
    return found


def test_no_two_classes_in_the_package_share_a_name() -> None:
    classes = definitions(ast.ClassDef)
    assert len(classes) > 50
    assert {name: places for name, places in classes.items() if len(places) > 1} == {}


def test_message_is_a_chat_message_defined_once() -> None:
    places = [where.rpartition(":")[0] for where in definitions(ast.Assign)["Message"]]
    assert places == ["elelem_daemon/conversation.py"]
