"""Choosing a provider: the default order, settings errors, lazy imports, the faces."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from elelem_daemon.base import config
from elelem_daemon.base.errors import ElelemError, ProviderError

from .conftest import REGISTRY, session_for, stream
from .replay import json_reply


@pytest.fixture(autouse=True)
def fresh_notice(monkeypatch):
    monkeypatch.setattr(config, "_noticed", False)


def choose(env: dict[str, str]) -> tuple[str, str]:
    notice = io.StringIO()
    return config.default_provider(env, notice), notice.getvalue()


def refused() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_order(tmp_path, server):
    base = {"XDG_CONFIG_HOME": str(tmp_path), "OLLAMA_HOST": refused()}
    assert choose(base) == ("stub", config.NOTICE + "\n")
    server.routes["/api/version"] = json_reply(200, {"version": "0.12.6"})
    with_ollama = {**base, "OLLAMA_HOST": server.url}
    assert choose(with_ollama) == ("ollama", "")
    assert choose({**with_ollama, "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"})[0] == "openai"
    assert choose({**with_ollama, "OPENAI_API_KEY": "k"})[0] == "openai"
    both = {**with_ollama, "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    assert choose(both)[0] == "anthropic"
    (tmp_path / "elelem").mkdir()
    (tmp_path / "elelem" / "config.toml").write_text('provider = "ollama"\n')
    assert choose(both)[0] == "ollama"
    assert choose({**both, "ELELEM_PROVIDER": "stub"}) == ("stub", "")


def test_something_else_on_the_ollama_port_is_not_ollama(tmp_path, server):
    server.routes["/api/version"] = json_reply(200, {"hello": "world"})
    env = {"XDG_CONFIG_HOME": str(tmp_path), "OLLAMA_HOST": f"http://{server.url[7:]}"}
    assert choose(env)[0] == "stub"


def test_no_ollama_is_known_without_importing_http_client(tmp_path):
    """Nothing on the Ollama port: one refused connect says so (no http.client)."""
    code = (
        "import sys\n"
        "from elelem_daemon.base import config\n"
        f"assert not config.ollama_answers({{'OLLAMA_HOST': {refused()!r}}})\n"
        "assert 'http.client' not in sys.modules, 'http.client imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.parametrize("host", ["127.0.0.1:99999", "http://[::1", "http://127.0.0.1:port"])
def test_an_unusable_ollama_host_is_no_ollama(host):
    assert config.ollama_answers({"OLLAMA_HOST": host}, timeout=2) is False


def test_notice_is_printed_once(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path), "OLLAMA_HOST": refused()}
    assert choose(env)[1] and not choose(env)[1]


@pytest.mark.parametrize(
    "text, error",
    [
        ("provider = ", "cannot read"),
        ("provider = 3\n", "provider must be a name"),
        ('provider = ""\n', "provider must be a name"),
    ],
)
def test_broken_config_file_is_a_clear_error(tmp_path, text, error):
    (tmp_path / "elelem").mkdir()
    (tmp_path / "elelem" / "config.toml").write_text(text)
    with pytest.raises(ElelemError, match=error) as caught:
        config.default_provider({"XDG_CONFIG_HOME": str(tmp_path)})
    assert str(tmp_path / "elelem" / "config.toml") in str(caught.value)


def test_config_file_without_provider_falls_through(tmp_path):
    (tmp_path / "elelem").mkdir()
    (tmp_path / "elelem" / "config.toml").write_text("# nothing yet\n")
    env = {"XDG_CONFIG_HOME": str(tmp_path), "ANTHROPIC_API_KEY": "k"}
    assert choose(env)[0] == "anthropic"


@pytest.mark.parametrize(
    "name, env, error",
    [
        ("anthropic", {}, "anthropic: set ANTHROPIC_API_KEY to use this provider"),
        (
            "anthropic",
            {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_THINKING_BUDGET": "lots"},
            "ANTHROPIC_THINKING_BUDGET must be a whole number of tokens, got 'lots'",
        ),
        (
            "anthropic",
            {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_THINKING_BUDGET": "500"},
            "ANTHROPIC_THINKING_BUDGET must be at least 1024 and below ANTHROPIC_MAX_TOKENS "
            "(16000), got 500",
        ),
        (
            "anthropic",
            {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_MAX_TOKENS": "-5"},
            "ANTHROPIC_MAX_TOKENS must be a whole number of tokens, got '-5'",
        ),
        ("openai", {}, "openai: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server"),
        (
            "openai",
            {"OPENAI_BASE_URL": "localhost:8080/v1"},
            "OPENAI_BASE_URL must start with http:// or https://, got 'localhost:8080/v1'",
        ),
        (
            "openai",
            {"OPENAI_BASE_URL": "http://x/v1", "OPENAI_MAX_TOKENS": "1k"},
            "OPENAI_MAX_TOKENS must be a whole number of tokens, got '1k'",
        ),
        (
            "ollama",
            {"OLLAMA_THINK": "maybe"},
            "OLLAMA_THINK must be one of true, false, low, medium, high, got 'maybe'",
        ),
        (
            "ollama",
            {"OLLAMA_NUM_CTX": "big"},
            "OLLAMA_NUM_CTX must be a whole number of tokens, got 'big'",
        ),
        (
            "ollama",
            {"ELELEM_READ_TIMEOUT": "soon"},
            "ELELEM_READ_TIMEOUT must be a number >= 0, got 'soon'",
        ),
        ("ollama", {"ELELEM_RETRIES": "-1"}, "ELELEM_RETRIES must be a number >= 0, got '-1'"),
    ],
)
def test_bad_settings_are_clear_errors(monkeypatch, name, env, error):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ProviderError) as caught:
        REGISTRY.build_provider(name)
    assert str(caught.value) == error


@pytest.mark.parametrize(
    "host, url",
    [
        (None, "http://127.0.0.1:11434"),
        ("0.0.0.0", "http://0.0.0.0:11434"),
        ("gpu-box:9999", "http://gpu-box:9999"),
        ("https://ollama.example.com/", "https://ollama.example.com"),
    ],
)
def test_ollama_host(monkeypatch, host, url):
    if host:
        monkeypatch.setenv("OLLAMA_HOST", host)
    assert REGISTRY.build_provider("ollama").base_url == url


def test_models_from_arguments_and_environment(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("OPENAI_MODEL", "qwen2.5-coder")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    assert REGISTRY.build_provider("anthropic").model == "claude-opus-4-5"
    assert (
        REGISTRY.build_provider("anthropic", model="claude-haiku-4-5").model == "claude-haiku-4-5"
    )
    assert REGISTRY.build_provider("openai").model == "qwen2.5-coder"
    assert REGISTRY.build_provider("ollama").model == "gpt-oss:latest"
    assert {"anthropic", "openai", "ollama", "stub"} <= set(REGISTRY.provider_names())


def test_start_path_does_not_import_httpx():
    code = (
        "import sys\n"
        "from elelem_daemon.plugins import core_registry\n"
        "from elelem_daemon.session import start\n"
        "from elelem_daemon.base.config import default_provider\n"
        "start(core_registry(), 'stub', plugin_files=False)\n"
        "assert 'httpx' not in sys.modules, 'httpx imported'\n"
        "start(core_registry(), 'openai', plugin_files=False)\n"
        "assert 'httpx' in sys.modules\n"
    )
    env = {**os.environ, "ELELEM_PROVIDER": "stub", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)


async def test_context_shows_usage_and_provider_switch(server, monkeypatch, tmp_path):
    session, _ = session_for("openai", server, monkeypatch, tmp_path)
    assert "tokens, last turn" not in (await session.command("/context")).output
    server.queue(stream("openai_text.sse"))
    await session.turn("hi")
    text = (await session.command("/context")).output
    assert text.splitlines()[-1] == "  tokens, last turn: 530 in, 9 out"
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    assert (await session.command("/provider ollama")).output == "  → switched to ollama"
    assert session.provider.name == "ollama"
    assert (await session.command("/model qwen3")).output == "  → model: qwen3"
    server.queue(stream("ollama_text.ndjson"))
    await session.turn("again")
    assert server.requests[-1].path == "/api/chat"
    assert server.requests[-1].json["model"] == "qwen3"


def test_ask_with_provider_flag(server, tmp_path):
    """The terminal face: `elelem ask -p openai` against the local server."""
    server.queue(stream("openai_text.sse", 11))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC"))},
        "OPENAI_BASE_URL": f"{server.url}/v1",
        "ELELEM_PROVIDER": "",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "elelem_daemon",
            "ask",
            "-p",
            "openai",
            "-m",
            "local",
            "--no-project-plugins",
            "hi",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The README says: # Demo\n"
    assert server.requests[0].json["model"] == "local"
    assert "authorization" not in server.requests[0].headers
