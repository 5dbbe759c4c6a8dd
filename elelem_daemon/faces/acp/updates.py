"""The `session/update` payloads: core events (say, thinking, doing, result) in ACP's shapes.

Pure functions, so the mapping is testable without a connection.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TITLE_ARGUMENT = ("command", "path", "pattern", "question", "url", "query")
TITLE_WIDTH = 80
VERBS = {"read": "Read", "write": "Write", "edit": "Edit", "list": "List"}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def chunk(kind: str, value: str) -> dict[str, Any]:
    """`agent_message_chunk`, `agent_thought_chunk` or `user_message_chunk`."""
    return {"sessionUpdate": kind, "content": text(value)}


def plan(entries: list[dict[str, str]]) -> dict[str, Any]:
    """ACP's `plan` update: every entry with `priority: medium` (the `todo` tool has none)."""
    shown = [
        {"content": e["content"], "priority": "medium", "status": e["status"]} for e in entries
    ]
    return {"sessionUpdate": "plan", "entries": shown}


def one_line(value: str, width: int = TITLE_WIDTH) -> str:
    """The first line that has text, cut to `width` characters."""
    first = next((line.strip() for line in value.splitlines() if line.strip()), value.strip())
    return first if len(first) <= width else first[: width - 1] + "…"


def code(value: str) -> str:
    """Inline Markdown code: `value`, fenced with more backticks than it holds."""
    fence = "`"
    while fence in value:
        fence += "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def shown_path(path: str, cwd: Path) -> str:
    """A path as the user knows it: relative to the session's folder when inside it."""
    try:
        return str(Path(absolute(path, cwd)).relative_to(cwd)) or "."
    except ValueError:
        return path


def tool_title(name: str, arguments: dict[str, Any], cwd: Path | None = None) -> str:
    """claude-agent-acp's style, so editors show what runs: the command in backticks
    (`` `ls -la` ``), the verb and the path (``Read `README.md` ``), the search
    (``Find `*.py` ``), the question itself, a sub-agent's job (`Task: ...`), the skill
    (`Skill: review-pr`), the plan (`Update plan: 3 tasks`), the MCP resource
    (``Resource: docs `file:///a` ``); any other tool (an MCP server's, a plugin's):
    its name and its telling argument."""
    where = cwd or Path.cwd()

    def argument(key: str) -> str | None:
        value = arguments.get(key)
        return one_line(value) if isinstance(value, str) and value.strip() else None

    command, path, pattern = argument("command"), argument("path"), argument("pattern")
    if name == "execute" and command:
        return code(command)
    if name in VERBS and (path or name == "list"):
        return f"{VERBS[name]} {code(shown_path(path or '.', where))}"
    if name in ("glob", "grep") and pattern:
        verb = "Find" if name == "glob" else "Search"
        inside = f" in {code(shown_path(path, where))}" if path else ""
        return f"{verb} {code(pattern)}{inside}"
    if name == "interview" and (question := argument("question")):
        return question
    if name == "task" and (job := argument("prompt")):  # a sub-agent: its job
        return f"Task: {job}"
    if name == "skill" and (skill := argument("name")):
        file = argument("file")
        return f"Skill: {visible(skill)}" + (f" {code(file)}" if file else "")
    if name == "todo" and isinstance(todos := arguments.get("todos"), list):
        return f"Update plan: {len(todos)} task{'' if len(todos) == 1 else 's'}"
    if name == "resource" and (server := argument("server")):
        uri = argument("uri")
        shown = visible(server)
        return f"Resource: {shown} {code(uri)}" if uri else f"List resources: {shown}"
    for key in TITLE_ARGUMENT:
        if (value := argument(key)) is not None:
            return f"{name} {code(value)}"
    return name


def absolute(path: str, cwd: Path) -> str:
    return str((cwd / Path(path).expanduser()).resolve())


def locations(arguments: dict[str, Any], cwd: Path) -> list[dict[str, Any]]:
    path = arguments.get("path")
    return [{"path": absolute(path, cwd)}] if isinstance(path, str) and path else []


def tool_call(ident: str, call: dict[str, Any], kind: str, cwd: Path) -> dict[str, Any]:
    """The `tool_call` that announces a call about to run; `kind` is the tool's own."""
    arguments = call.get("arguments") or {}
    update = {
        "sessionUpdate": "tool_call",
        "toolCallId": ident,
        "title": tool_title(call["name"], arguments, cwd),
        "kind": kind,
        "status": "in_progress",
        "rawInput": arguments,
    }
    where = locations(arguments, cwd)
    if where:
        update["locations"] = where
    return update


def hunks(unified: str) -> list[tuple[str | None, str]]:
    """Each hunk of a unified diff as (old text, new text); old is None for a new file."""
    created = unified.startswith("--- /dev/null")
    found: list[tuple[list[str], list[str]]] = []
    last = ""
    for line in unified.splitlines(keepends=True):
        if line.startswith("@@"):
            found.append(([], []))
        elif not found or line.startswith("[... diff truncated"):
            continue
        elif line.startswith("\\"):  # no newline at end of file: the line before has none
            for side, kinds in ((0, " -"), (1, " +")):
                if last in kinds and found[-1][side]:
                    found[-1][side][-1] = found[-1][side][-1].rstrip("\n")
        elif line[:1] in (" ", "-", "+"):
            last = line[0]
            if last in " -":
                found[-1][0].append(line[1:])
            if last in " +":
                found[-1][1].append(line[1:])
    return [(None if created else "".join(old), "".join(new)) for old, new in found]


def diff_content(diff: Any, arguments: dict[str, Any], cwd: Path) -> list[dict[str, Any]]:
    """A core `diff` (a unified diff of one file) as ACP diff content, one per hunk."""
    path = arguments.get("path")
    if not isinstance(diff, str) or not isinstance(path, str):
        return []
    where = absolute(path, cwd)
    return [
        {"type": "diff", "path": where, "oldText": old, "newText": new} for old, new in hunks(diff)
    ]


def fenced(body: str, info: str = "") -> str:
    """A fenced code block; the body's own last line break is the block's (no blank
    line before the closing fence)."""
    fence = "```"
    while fence in body:
        fence += "`"
    body = body[:-1] if body.endswith("\n") else body
    return f"{fence}{info}\n{body}\n{fence}"


def result_text(payload: dict[str, Any]) -> str:
    if "error" in payload:
        return f"error: {payload['error']}"
    content = payload.get("content")
    if isinstance(content, str):
        return fenced(content) if content else "(empty)"
    if "answer" in payload:
        return str(payload["answer"])
    if isinstance(payload.get("result"), str):  # a sub-agent's answer (the `task` tool)
        return payload["result"]
    return fenced(json.dumps(payload, ensure_ascii=False, indent=2, default=str), "json")


def tool_result(
    ident: str, call: dict[str, Any], ok: bool, payload: dict[str, Any], cwd: Path
) -> dict[str, Any]:
    """The `tool_call_update` that ends a call: status, raw output and what to show."""
    content = [{"type": "content", "content": text(result_text(payload))}]
    diff = diff_content(payload.get("diff"), call.get("arguments") or {}, cwd)
    if ok and diff:
        content = diff
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": ident,
        "status": "completed" if ok else "failed",
        "rawOutput": {**payload, "ok": ok},
        "content": content,
    }


def usage(counts: dict[str, int]) -> dict[str, int] | None:
    """The turn's token counts as `PromptResponse.usage` (with the cache's share when
    the provider said it); None if unknown."""
    if "input_tokens" not in counts and "output_tokens" not in counts:
        return None
    read, wrote = counts.get("input_tokens", 0), counts.get("output_tokens", 0)
    answer = {"inputTokens": read, "outputTokens": wrote, "totalTokens": read + wrote}
    for ours, theirs in (
        ("cache_read_tokens", "cachedReadTokens"),
        ("cache_write_tokens", "cachedWriteTokens"),
    ):
        if ours in counts:
            answer[theirs] = counts[ours]
    return answer


def usage_update(used: int, size: int, cost: float | None = None) -> dict[str, Any]:
    """How full the model's context is: `used` of `size` tokens, and the session's
    cost so far when its price is known (ACP's `usage_update`; turns/usage.py)."""
    update: dict[str, Any] = {"sessionUpdate": "usage_update", "used": max(used, 0), "size": size}
    if cost is not None:
        update["cost"] = {"amount": cost, "currency": "USD"}
    return update


# -- questions (editor.py's AcpInput): the title says what, to which files, which choices --
QUESTION_WIDTH = 240  # characters of a question's title
NAMES_SHOWN = 8  # file names a title names; the rest counted
LOCATIONS_SHOWN = 20
CHOICE_LABELS = {  # how clients that draw an option by its kind label it (codecompanion)
    "allow_once": "Accept",
    "allow_always": "Always accept",
    "reject_once": "Reject",
    "reject_always": "Reject always",
}
QUESTION_KINDS = {"rewind": "edit"}  # a question of no running call: its tool_call's kind
REWIND_VERBS = (("restore", "restored"), ("delete", "deleted"), ("create again", "created"))


def visible(value: str) -> str:
    """A name on one line: control characters (a newline in a file name) shown as `?`."""
    return "".join("?" if ord(c) < 32 or ord(c) == 127 else c for c in value)


def cut(value: str, width: int = QUESTION_WIDTH) -> str:
    return value if len(value) <= width else value[: width - 1] + "…"


def names(paths: list[str]) -> str:
    shown = ", ".join(code(visible(p)) for p in paths[:NAMES_SHOWN])
    return shown + (f" and {len(paths) - NAMES_SHOWN} more" if len(paths) > NAMES_SHOWN else "")


def rewind_files(tool: dict[str, Any]) -> dict[str, list[str]]:
    """The files a rewind's plan (`tool.plan`, control/rewind.py's dry run) would
    restore, delete and create again; empty when it would touch none."""
    plan = tool.get("plan")
    files = plan.get("files") if isinstance(plan, dict) else None
    if not isinstance(files, dict):
        return {}
    found = {}
    for _, key in REWIND_VERBS:
        paths = files.get(key)
        if isinstance(paths, list):
            found[key] = [p for p in paths if isinstance(p, str)]
    return found


def rewind_title(tool: dict[str, Any]) -> str:
    """`Rewind to before turn 2: restore `a.py`; delete `new.txt``: what a rewind would
    do, naming its files (checkpoints off: the files stay)."""
    arguments = tool.get("arguments") or {}
    head = f"Rewind to before turn {arguments.get('turnId')}"
    if not arguments.get("files"):
        return f"{head} (the files stay as they are)"
    files = rewind_files(tool)
    parts = [f"{verb} {names(files[key])}" for verb, key in REWIND_VERBS if files.get(key)]
    return cut(f"{head}: {'; '.join(parts)}" if parts else f"{head} (no file changed)")


def question_title(
    prompt: str, tool: dict[str, Any], choices: list[dict[str, str]] | None = None
) -> str:
    """A question's title, for clients that draw the title alone (codecompanion,
    avante): a rewind names its files; another question its first line; choices that
    only a kind tells apart name their label (`Accept = red, Always accept = blue`)."""
    if tool.get("name") == "rewind":
        return rewind_title(tool)
    if tool.get("name") == "trust" and isinstance(tool.get("loads"), list):
        return trust_title(prompt, tool["loads"])
    title = cut(one_line(visible_lines(prompt), QUESTION_WIDTH))
    if choices:
        listed = ", ".join(f"{CHOICE_LABELS[c['kind']]} = {visible(c['name'])}" for c in choices)
        title = cut(f"{title} {listed}")
    return title


def trust_title(prompt: str, loads: list[Any]) -> str:
    """The trust form's title: the question, then what the folder would load, on one
    line (`... It loads: plugin `a.py`; MCP server `docs` ...`), the first 8 then
    `and N more` (a client that draws the title alone still shows what it trusts)."""
    head = one_line(visible_lines(prompt), QUESTION_WIDTH).removesuffix(" Trusting it loads:")
    shown = [visible(str(line)) for line in loads[:NAMES_SHOWN]]
    more = f" and {len(loads) - NAMES_SHOWN} more" if len(loads) > NAMES_SHOWN else ""
    return cut(f"{head} It loads: {'; '.join(shown)}{more}" if shown else head)


def visible_lines(value: str) -> str:
    """Control characters but the line break shown as `?`."""
    return "\n".join(visible(line) for line in value.split("\n"))


def question_locations(tool: dict[str, Any], cwd: Path) -> list[dict[str, Any]]:
    """Where a question's files are: a rewind's, else the tool's `path`."""
    if tool.get("name") != "rewind":
        return locations(tool.get("arguments") or {}, cwd)
    paths = [p for _, key in REWIND_VERBS for p in rewind_files(tool).get(key, [])]
    return [{"path": absolute(p, cwd)} for p in paths[:LOCATIONS_SHOWN]]
