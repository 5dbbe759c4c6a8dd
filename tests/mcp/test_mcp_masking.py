"""masking.py and budget.py, unit by unit (the daemon-level cases: test_mcp_bounds.py)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from elelem_daemon.mcp import budget
from elelem_daemon.mcp.config import ServerConfig
from elelem_daemon.safety import masking


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["--token", "abc"], ["--token", "***"]),
        (["--api-key", "abc", "-k", "def"], ["--api-key", "***", "-k", "***"]),
        # issue 36: a shell string, -p, a header, a token as a URL's user or in its path
        (
            ["-c", "exec server --password hunter2 --port 80"],
            ["-c", "exec server --password *** --port 80"],
        ),
        (["-u", "root", "-p", "hunter2"], ["-u", "root", "-p", "***"]),
        (["-H", "Authorization: Bearer abc.def"], ["-H", "Authorization: Bearer ***"]),
        (["--header", "X-Api-Key: abc"], ["--header", "X-Api-Key: ***"]),
        (["-c", "srv -H 'Authorization: tok1'"], ["-c", "srv -H 'Authorization: ***'"]),
        (
            ["https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/1"],
            ["https://***@o1.ingest.sentry.io/1"],
        ),
        (["https://ghp_abcdefghij0123456789@github.com/o/r"], ["https://***@github.com/o/r"]),
        (["https://h.example/a1b2c3d4e5f6a7b8c9d0e1f2/sse"], ["https://h.example/***/sse"]),
        (["--password=hunter2", "--access-token=x"], ["--password=***", "--access-token=***"]),
        (
            ["GITHUB_PERSONAL_ACCESS_TOKEN=x", "MY_SERVICE_KEY=y"],
            ["GITHUB_PERSONAL_ACCESS_TOKEN=***", "MY_SERVICE_KEY=***"],
        ),
        (["ghp_0123456789abcdefABCDEF"], ["***"]),
        (["sk-proj-0123456789"], ["***"]),
        (["AbCdEf0123456789AbCdEf0123"], ["***"]),
        (["postgres://u:pw@h/db"], ["postgres://u:***@h/db"]),
        (["--db=postgres://u:pw@h/db"], ["--db=postgres://u:***@h/db"]),
        (["https://h/x?api_key=abc&q=1"], ["https://h/x?api_key=***&q=1"]),
        # not secrets: shown as they are
        (
            ["-y", "@modelcontextprotocol/server-github"],
            ["-y", "@modelcontextprotocol/server-github"],
        ),
        (
            ["--db-path", "/tmp/x.db", "--port", "8080"],
            ["--db-path", "/tmp/x.db", "--port", "8080"],
        ),
        (
            ["mcp-server-sqlite==0.6.2", "server-filesystem-2024.11.25"],
            ["mcp-server-sqlite==0.6.2", "server-filesystem-2024.11.25"],
        ),
        (
            ["https://example.com/mcp", "postgres://u@h/db"],
            ["https://example.com/mcp", "postgres://u@h/db"],
        ),
        (
            ["https://git@github.com/o/r.git", "https://h/api/v2/items/latest"],
            ["https://git@github.com/o/r.git", "https://h/api/v2/items/latest"],
        ),
        (["-c", "exec server --port 8080 --verbose"], ["-c", "exec server --port 8080 --verbose"]),
    ],
)
def test_args_are_masked_by_the_rule(args: list[str], shown: list[str]) -> None:
    assert masking.args(args) == shown


def test_a_value_of_the_config_env_is_masked_wherever_it_is() -> None:
    config = ServerConfig(
        "s", "stdio", "srv", ("--header", "X: tok-value-123"), env=(("T", "tok-value-123"),)
    )
    assert config.describe() == "srv --header ***"
    assert masking.hidden(config.args, ["tok-value-123"]) == ["tok-value-123"]


def test_a_url_target_is_masked() -> None:
    config = ServerConfig("s", "http", url="https://u:pw-long-1@h/mcp?token=abcdefgh")
    assert config.describe() == "https://u:***@h/mcp?token=***"


def test_redact_takes_every_secret_out_of_bytes() -> None:
    assert masking.redact(b"a tok-1234 b tok-1234", [b"tok-1234"]) == b"a *** b ***"


@dataclass
class T:
    remote: str
    size: int


def test_the_budget_cuts_the_largest_servers_largest_tools_first() -> None:
    offered = {
        "huge": [T(f"h{n}", 100) for n in range(10)] + [T("hx", 500)],
        "small": [T("s1", 50), T("s2", 60)],
    }
    assert budget.cut(offered, 10_000) == {}
    assert budget.cut(offered, 710) == {"huge": ["hx", "h0", "h1", "h2", "h3"]}
    assert budget.cut(offered, 100) == {
        "huge": ["hx", *(f"h{n}" for n in range(10))],
        "small": ["s2"],
    }
