"""Install as users will: the built wheel alone, never the checkout (tests/install/README.md).

One sdist and wheel per run (`python -m build`, as a release makes them), then:
- a fresh virtual environment with `pip install WHEEL`;
- `pipx install WHEEL` and `uv tool install WHEEL`, and `uvx --from WHEEL`;
each taking its dependencies from the usual package index. Every command runs with HOME
and the XDG folders of its own, from a folder outside the checkout, so nothing can
import the package from the source tree.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from support.acp_probe import acp_initialize

ROOT = Path(__file__).resolve().parents[2]
VERSION = subprocess.run(
    [sys.executable, "-c", "import tomllib;print(tomllib.load(open('pyproject.toml','rb'))"
     "['project']['version'])"],
    cwd=ROOT, capture_output=True, text=True, check=True,
).stdout.strip()  # fmt: skip

pytestmark = pytest.mark.e2e


def clean_env(home: Path, **more: str) -> dict[str, str]:
    """An environment of the user's own: no elelem, provider or XDG setting of the
    caller's, a HOME of its own."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ELELEM_", "OPENAI", "ANTHROPIC", "OLLAMA", "XDG_", "VIRTUAL_ENV"))
        and k not in ("PYTHONPATH", "PYTHONHOME")
    }
    for name in ("config", "state", "data", "cache"):
        (home / f".{name}").mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".state"),
        XDG_DATA_HOME=str(home / ".data"),
        XDG_CACHE_HOME=str(home / ".cache"),
        **more,
    )
    return env


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel, built as a release builds them (the wheel from the sdist)."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return out


@pytest.fixture(scope="module")
def wheel(dist: Path) -> Path:
    (found,) = dist.glob("elelem_daemon-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel installed; its bin folder."""
    where = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=300)
    subprocess.run(
        [str(where / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
        check=True, capture_output=True, timeout=900,
    )  # fmt: skip
    return where / "bin"


def test_the_build_makes_an_sdist_and_a_wheel_of_this_version(dist: Path) -> None:
    names = sorted(p.name for p in dist.iterdir())
    assert f"elelem_daemon-{VERSION}.tar.gz" in names
    assert f"elelem_daemon-{VERSION}-py3-none-any.whl" in names


def test_the_wheel_holds_the_package_and_both_commands(wheel: Path) -> None:
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (entry_points,) = [n for n in names if n.endswith("entry_points.txt")]
        scripts = archive.read(entry_points).decode()
    assert "elelem_daemon/processes/reaper.py" in names  # run by path: must ship
    assert "elelem = elelem_daemon.cli:main" in scripts
    assert "elelem-daemon = elelem_daemon.cli:main" in scripts
    assert not any(n.startswith("tests/") for n in names)


def test_a_fresh_venv_runs_version_and_answers_acp_initialize(venv: Path, tmp_path: Path) -> None:
    env = clean_env(tmp_path / "home")
    out = subprocess.run(
        [str(venv / "elelem"), "--version"], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"elelem v{VERSION}"
    for command in ([str(venv / "elelem")], [str(venv / "elelem-daemon")]):
        with_terminal = acp_initialize([*command, "daemon", "--acp"], tmp_path, env, True)
        (method,) = with_terminal["authMethods"]
        assert method["type"] == "terminal" and method["args"] == ["--login"]
        assert with_terminal["agentInfo"]["version"] == VERSION
        without = acp_initialize([*command, "daemon", "--acp"], tmp_path, env, False)
        assert without["authMethods"] == []


def test_the_installed_package_is_the_wheel_not_the_checkout(venv: Path, tmp_path: Path) -> None:
    out = subprocess.run(
        [str(venv / "python"), "-c", "import elelem_daemon;print(elelem_daemon.__file__)"],
        cwd=tmp_path, env=clean_env(tmp_path / "home"), capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert str(ROOT) not in out.stdout and "site-packages" in out.stdout


# -- sign-in under a pty, from the installed wheel -----------------------------------------


class KeyServer:
    """An OpenAI-compatible server on 127.0.0.1 that knows one key: `GET /v1/models`
    answers 200 to it and 401 to anything else; it records the keys it saw."""

    KEY = "sk-test-0123456789"

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        seen = self.seen = []  # type: list[str]
        key = self.KEY

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                given = self.headers.get("authorization", "")
                seen.append(given)
                ok = self.path == "/v1/models" and given == f"Bearer {key}"
                body = json.dumps({"data": [{"id": "local"}]} if ok else {"error": "no"})
                self.send_response(200 if ok else 401)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def key_server() -> Iterator[KeyServer]:
    server = KeyServer()
    yield server
    server.stop()


def test_login_under_a_pty_keeps_a_checked_key_only_the_user_can_read(
    venv: Path, tmp_path: Path, key_server: KeyServer
) -> None:
    home = tmp_path / "home"
    env = clean_env(home, TERM="dumb")
    child = pexpect.spawn(
        str(venv / "elelem"), ["login"], cwd=str(tmp_path), env=env, encoding="utf-8",
        timeout=30,
    )  # fmt: skip
    child.expect(r"Provider \[1-5\]: ")
    child.sendline("3")  # an OpenAI-compatible server
    child.expect("Address, ending in /v1: ")
    child.sendline(key_server.url)
    child.expect(r"API key \(Enter for none\): ")
    child.sendline("sk-wrong")  # refused: asked again, nothing kept
    child.expect("That did not work: .* refused the key")
    child.expect("Address, ending in /v1: ")
    child.sendline(key_server.url)
    child.expect(r"API key \(Enter for none\): ")
    child.sendline(KeyServer.KEY)
    child.expect("Signed in: openai at ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "sk-" not in (child.before or "")  # the key is never echoed nor printed
    kept = home / ".config" / "elelem" / "credentials.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) & 0o077 == 0
    assert json.loads(kept.read_text()) == {
        "provider": "openai",
        "env": {"OPENAI_BASE_URL": key_server.url, "OPENAI_API_KEY": KeyServer.KEY},
    }
    assert key_server.seen == ["Bearer sk-wrong", f"Bearer {KeyServer.KEY}"]

    # every face now finds the provider: ACP offers a session with no auth needed
    result = acp_initialize([str(venv / "elelem"), "daemon", "--acp"], tmp_path, env, True,
                            new_session=True)  # fmt: skip
    assert result["session"].get("sessionId"), result

    out = subprocess.run(
        [str(venv / "elelem"), "logout"], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0 and "Signed out" in out.stdout
    assert not kept.exists()
    result = acp_initialize([str(venv / "elelem"), "daemon", "--acp"], tmp_path, env, True,
                            new_session=True)  # fmt: skip
    assert result["session"]["error"]["data"]["kind"] == "auth_required"


def test_login_without_a_terminal_refuses_and_keeps_nothing(venv: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    out = subprocess.run(
        [str(venv / "elelem"), "login"], cwd=tmp_path, env=clean_env(home),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2 and "needs a terminal" in out.stderr
    assert not (home / ".config" / "elelem" / "credentials.json").exists()


# -- pipx and uv, from the usual package index ---------------------------------------------


def tool(name: str) -> str:
    """pipx or uv: the test environment's own (the `test` extra installs both)."""
    found = Path(sys.executable).parent / name
    return str(found) if found.exists() else (shutil.which(name) or pytest.fail(f"no {name}"))


def test_pipx_install_of_the_wheel_runs(wheel: Path, tmp_path: Path) -> None:
    env = clean_env(
        tmp_path / "home",
        PIPX_HOME=str(tmp_path / "pipx"),
        PIPX_BIN_DIR=str(tmp_path / "bin"),
        PIPX_MAN_DIR=str(tmp_path / "man"),
    )
    subprocess.run(
        [tool("pipx"), "install", str(wheel)], cwd=tmp_path, env=env, check=True,
        capture_output=True, timeout=900,
    )  # fmt: skip
    out = subprocess.run(
        [str(tmp_path / "bin" / "elelem"), "--version"], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.strip() == f"elelem v{VERSION}", out.stderr
    result = acp_initialize([str(tmp_path / "bin" / "elelem-daemon"), "daemon", "--acp"],
                            tmp_path, env, True)  # fmt: skip
    assert [m["id"] for m in result["authMethods"]] == ["elelem-login"]


def uv_env(tmp_path: Path) -> dict[str, str]:
    return clean_env(
        tmp_path / "home",
        UV_TOOL_DIR=str(tmp_path / "uvtools"),
        UV_TOOL_BIN_DIR=str(tmp_path / "bin"),
        UV_CACHE_DIR=str(tmp_path / "uvcache"),
        UV_PYTHON_DOWNLOADS="never",  # the machine's Python: uv fetches none
        UV_PYTHON=sys.executable,
    )


def test_uv_tool_install_of_the_wheel_runs(wheel: Path, tmp_path: Path) -> None:
    env = uv_env(tmp_path)
    subprocess.run(
        [tool("uv"), "tool", "install", str(wheel)], cwd=tmp_path, env=env, check=True,
        capture_output=True, timeout=900,
    )  # fmt: skip
    out = subprocess.run(
        [str(tmp_path / "bin" / "elelem"), "--version"], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.strip() == f"elelem v{VERSION}", out.stderr


def test_the_registry_entry_runs_from_the_wheel_with_uvx(wheel: Path, tmp_path: Path) -> None:
    """registry/agent.json's command, `uvx elelem-daemon ARGS`, with the package taken
    from the built wheel instead of the index (the release is not published here)."""
    entry = json.loads((Path(__file__).parents[2] / "registry" / "agent.json").read_text())
    uvx = entry["distribution"]["uvx"]
    program = uvx["package"].split("==")[0]
    command = [tool("uv"), "tool", "run", "--from", str(wheel), program, *uvx["args"]]
    result = acp_initialize(command, tmp_path, uv_env(tmp_path), True)
    assert result["agentInfo"]["version"] == entry["version"]
    assert result["authMethods"][0]["type"] == "terminal"
