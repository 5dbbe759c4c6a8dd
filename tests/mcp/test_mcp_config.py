"""mcp.json, .mcp.json and the faces' mcpServers: every form to one ServerConfig, every
bad entry a clear problem (never an exception), sizes bounded, the project only when
trusted, `${VAR}` expanded where the docs say."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from elelem_daemon.mcp import config, entries
from elelem_daemon.mcp.config import ServerConfig, from_acp, from_face, load


def user_config(servers: object) -> Path:
    path = config.user_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def project_config(folder: Path, servers: object) -> Path:
    path = folder / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def test_the_claude_code_format_loads(tmp_path: Path) -> None:
    project_config(
        tmp_path,
        {
            "files": {"command": "npx", "args": ["-y", "x"], "env": {"A": "1"}, "cwd": "sub"},
            "api": {"type": "http", "url": "https://example.test/mcp", "headers": {"X": "y"}},
            "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            "inferred": {"url": "http://127.0.0.1:9/mcp"},
        },
    )
    servers, problems = load(tmp_path, trusted=True)
    assert problems == []
    by = {s.name: s for s in servers}
    assert by["files"] == ServerConfig(
        "files",
        "stdio",
        command="npx",
        args=("-y", "x"),
        env=(("A", "1"),),
        cwd="sub",
        source="project",
        origin=str(tmp_path / ".mcp.json"),
    )
    assert by["files"].origin == str(tmp_path / ".mcp.json")
    assert by["api"].transport == "http" and by["api"].headers == (("X", "y"),)
    assert by["old"].transport == "sse"
    assert by["inferred"].transport == "http"


def test_the_project_wins_per_name_and_loads_only_when_trusted(tmp_path: Path) -> None:
    user_config({"both": {"command": "user-cmd"}, "mine": {"command": "mine"}})
    project_config(tmp_path, {"both": {"command": "project-cmd"}, "theirs": {"command": "t"}})
    servers, _ = load(tmp_path, trusted=True)
    by = {s.name: s for s in servers}
    assert set(by) == {"both", "mine", "theirs"}
    assert by["both"].command == "project-cmd" and by["both"].source == "project"
    untrusted, _ = load(tmp_path, trusted=False)
    assert {s.name: s.command for s in untrusted} == {"both": "user-cmd", "mine": "mine"}


def test_xdg_config_home_is_where_the_user_file_is(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config.user_file() == tmp_path / "xdg" / "elelem" / "mcp.json"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"{not json", "not valid JSON"),
        (b"\xff\xfe", "not valid JSON"),
        (b"[]", 'expected {"mcpServers"'),
        (b'{"mcpServers": []}', 'expected {"mcpServers"'),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON"),
    ],
)
def test_a_broken_file_is_one_problem(tmp_path: Path, text: bytes, expected: str) -> None:
    (tmp_path / ".mcp.json").write_bytes(text)
    servers, problems = load(tmp_path, trusted=True)
    assert servers == []
    assert len(problems) == 1 and expected in str(problems[0])
    assert str(tmp_path / ".mcp.json") in str(problems[0])


def test_a_huge_file_is_refused_unread(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_bytes(b" " * (config.FILE_CAP + 1) + b"{}")
    servers, problems = load(tmp_path, trusted=True)
    assert servers == [] and "larger than" in str(problems[0])


def test_an_unreadable_file_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").mkdir()
    servers, problems = load(tmp_path, trusted=True)
    assert servers == [] and "unreadable" in str(problems[0])


BAD = {
    "no command": ({"args": []}, 'no "command" (a stdio server) or "url"'),
    "empty command": ({"command": " "}, "command: must be a non-empty string"),
    "args not a list": ({"command": "x", "args": "a b"}, "args: must be a list"),
    "an arg not a string": ({"command": "x", "args": ["a", 1]}, "args[1]: must be a string"),
    "env not an object": ({"command": "x", "env": ["A=1"]}, "env: must be an object"),
    "env value a number": ({"command": "x", "env": {"A": 1}}, "env.A: must be a string"),
    "env name with =": ({"command": "x", "env": {"A=B": "1"}}, "is not a usable name"),
    "NUL in a command": ({"command": "x\0y"}, "without NUL"),
    "bad type": ({"type": "websocket", "url": "ws://x"}, "type must be one of"),
    "url not http": ({"type": "http", "url": "file:///etc/passwd"}, "must be an http://"),
    "no url": ({"type": "http"}, "url: is required"),
    "headers a list": ({"type": "http", "url": "http://x", "headers": ["a"]}, "headers: must"),
    "timeout negative": ({"command": "x", "timeout": -1}, "timeout: must be a number"),
    "timeout a bool": ({"command": "x", "toolTimeout": True}, "toolTimeout: must be a number"),
    "not an object": ("npx server", "must be an object"),
    "a huge arg": ({"command": "x", "args": ["a" * (entries.MAX_TEXT + 1)]}, "at most"),
    "too many args": ({"command": "x", "args": ["a"] * (entries.MAX_ITEMS + 1)}, "at most"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_each_bad_entry_is_a_clear_problem_and_the_rest_loads(tmp_path: Path, case: str) -> None:
    entry, expected = BAD[case]
    project_config(tmp_path, {"bad": entry, "good": {"command": "ok"}})
    servers, problems = load(tmp_path, trusted=True)
    assert [s.name for s in servers] == ["good"]
    assert any(expected in str(p) and "mcpServers.bad" in str(p) for p in problems), problems


@pytest.mark.parametrize("name", ["", " ", "a b", "x" * 65, "a:b", "a/b", "tab\there", "\x1b[31m"])
def test_server_names_are_checked(tmp_path: Path, name: str) -> None:
    project_config(tmp_path, {name: {"command": "x"}})
    servers, problems = load(tmp_path, trusted=True)
    assert servers == [] and "name" in str(problems[0])


def test_an_unknown_key_is_a_warning_and_the_server_still_loads(tmp_path: Path) -> None:
    project_config(tmp_path, {"s": {"command": "x", "autoApprove": ["t"]}})
    servers, problems = load(tmp_path, trusted=True)
    assert [s.name for s in servers] == ["s"]
    assert problems[0].warning and "autoApprove" in str(problems[0])


def test_too_many_servers_are_cut(tmp_path: Path) -> None:
    project_config(tmp_path, {f"s{i}": {"command": "x"} for i in range(config.MAX_SERVERS + 5)})
    servers, problems = load(tmp_path, trusted=True)
    assert len(servers) == config.MAX_SERVERS
    assert "more than" in str(problems[-1])


def test_variables_are_expanded_with_defaults(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TOKEN_FOR_TEST", "s3cret")
    monkeypatch.setenv("DIR_FOR_TEST", "/data")
    project_config(
        tmp_path,
        {
            "s": {
                "command": "${DIR_FOR_TEST}/bin/server",
                "args": ["--root", "${DIR_FOR_TEST}", "${UNSET_FOR_TEST:-fallback}", "$HOME"],
                "env": {"GITHUB_TOKEN": "${TOKEN_FOR_TEST}"},
                "cwd": "${DIR_FOR_TEST}",
            },
            "h": {
                "url": "http://127.0.0.1:1/${DIR_FOR_TEST}",
                "headers": {"Authorization": "Bearer ${TOKEN_FOR_TEST}"},
            },
        },
    )
    servers, problems = load(tmp_path, trusted=True)
    assert problems == []
    by = {s.name: s for s in servers}
    assert by["s"].command == "/data/bin/server"
    assert by["s"].args == ("--root", "/data", "fallback", "$HOME")  # only ${...} expands
    assert by["s"].env == (("GITHUB_TOKEN", "s3cret"),)
    assert by["s"].cwd == "/data"
    assert by["h"].url == "http://127.0.0.1:1//data"
    assert by["h"].headers == (("Authorization", "Bearer s3cret"),)


def test_an_unset_variable_without_default_leaves_the_server_out(tmp_path: Path) -> None:
    os.environ.pop("SURELY_UNSET_VAR", None)
    project_config(tmp_path, {"s": {"command": "x", "env": {"T": "${SURELY_UNSET_VAR}"}}})
    servers, problems = load(tmp_path, trusted=True)
    assert servers == []
    assert "${SURELY_UNSET_VAR} is not set" in str(problems[0])


def test_acp_list_form_maps_to_the_same_config() -> None:
    servers, problems = from_acp(
        [
            {
                "name": "fs",
                "command": "/bin/fs",
                "args": ["/tmp"],
                "env": [{"name": "A", "value": "1"}],
            },
            {
                "type": "http",
                "name": "api",
                "url": "http://127.0.0.1:1/mcp",
                "headers": [{"name": "Authorization", "value": "Bearer ${NOT_EXPANDED}"}],
            },
            {"type": "sse", "name": "old", "url": "http://127.0.0.1:1/sse", "headers": []},
        ]
    )
    assert problems == []
    by = {s.name: s for s in servers}
    assert by["fs"].same(
        ServerConfig(
            "fs", "stdio", command="/bin/fs", args=("/tmp",), env=(("A", "1"),), source="client"
        )
    )
    assert by["api"].headers == (("Authorization", "Bearer ${NOT_EXPANDED}"),)  # literal
    assert by["old"].transport == "sse"


@pytest.mark.parametrize(
    ("servers", "expected"),
    [
        ({"name": "x"}, "must be a list"),
        (["npx"], "mcpServers[0]: must be an object"),
        ([{"command": "x"}], "needs a name"),
        ([{"name": "x", "command": "c", "env": {"A": "1"}}], "env: must be a list"),
        ([{"name": "x", "command": "c", "env": [{"value": "1"}]}], "with a string name"),
        (
            [{"name": "x", "type": "http", "url": "http://h", "headers": [{"name": "A"}]}],
            "must be a string",
        ),
    ],
)
def test_acp_bad_entries_are_problems(servers: object, expected: str) -> None:
    found, problems = from_acp(servers)
    assert found == []
    assert any(expected in str(p) for p in problems), problems


def test_the_daemon_form_is_the_files_map() -> None:
    servers, problems = from_face({"fs": {"command": "fs"}, "bad": {"command": 3}})
    assert [s.name for s in servers] == ["fs"] and servers[0].source == "client"
    assert "mcpServers.bad.command" in str(problems[0])


def test_merge_lets_the_later_layer_win() -> None:
    a = ServerConfig("s", "stdio", command="a")
    b = ServerConfig("s", "stdio", command="b", source="client")
    c = ServerConfig("t", "stdio", command="c")
    assert config.merge([a, c], [b]) == [b, c]


def test_a_misspelled_key_is_named_with_the_key_meant(tmp_path: Path) -> None:
    """Issue 33: `"comand"` read `got None` with no hint of the key meant."""
    project_config(
        tmp_path,
        {"typo": {"comand": "npx", "args": ["x"]}, "s": {"command": "x", "enviroment": {}}},
    )
    servers, problems = load(tmp_path, trusted=True)
    assert [s.name for s in servers] == ["s"]
    typo = next(str(p) for p in problems if "mcpServers.typo" in str(p))
    assert 'no "command" (a stdio server) or "url" (http, sse)' in typo
    assert '"comand": did you mean "command"?' in typo and "None" not in typo
    near = next(str(p) for p in problems if "enviroment" in str(p))
    assert 'did you mean "env"?' in near
