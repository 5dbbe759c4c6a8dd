"""The sign-in's file (base/signin.py): kept for the user alone, read without trusting it,
and beaten by the environment, group by group."""

from __future__ import annotations

import io
import json
import os
import stat

import pytest

from elelem_daemon.base import config, keys, signin


@pytest.fixture
def env(tmp_path, monkeypatch) -> dict[str, str]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delitem(keys._store, name, raising=False)
    monkeypatch.setattr(config, "_noticed", False)
    return {"XDG_CONFIG_HOME": str(tmp_path / "config"), "OLLAMA_HOST": "127.0.0.1:1"}


def test_save_is_0600_in_a_0700_folder_and_reads_back(env):
    where = signin.save("openai", {"OPENAI_BASE_URL": "http://h/v1", "OPENAI_API_KEY": "sk-1"}, env)
    assert stat.S_IMODE(where.stat().st_mode) == 0o600
    assert stat.S_IMODE(where.parent.stat().st_mode) == 0o700
    assert signin.read(env)["env"]["OPENAI_API_KEY"] == "sk-1"
    assert not list(where.parent.glob(".credentials*"))  # no temporary left
    assert signin.forget(env) and not where.exists() and not signin.forget(env)


def test_a_signin_only_sets_its_providers_variables(env):
    with pytest.raises(ValueError):
        signin.save("openai", {"PATH": "/tmp/evil"}, env)
    with pytest.raises(ValueError):
        signin.save("nobody", {}, env)


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "[]",
        json.dumps({"provider": "openai", "env": {"LD_PRELOAD": "/x.so"}}),
        json.dumps({"provider": "stub", "env": {}}),
        json.dumps({"provider": "openai", "env": {"OPENAI_API_KEY": 5}}),
        json.dumps({"provider": "openai", "env": {"OPENAI_API_KEY": "k" * 5000}}),
    ],
)
def test_a_file_that_is_not_a_signin_reads_as_none(env, content):
    where = signin.path(env)
    where.parent.mkdir(parents=True)
    where.write_text(content)
    assert signin.read(env) == {}
    assert signin.provider(env) is None


def test_a_fifo_or_a_link_or_a_huge_file_freezes_nothing(env, tmp_path):
    where = signin.path(env)
    where.parent.mkdir(parents=True)
    os.mkfifo(where)
    assert signin.read(env) == {}  # would block forever with a plain open()
    where.unlink()
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"provider": "ollama", "env": {"OLLAMA_HOST": "h:1"}}))
    where.symlink_to(target)
    assert signin.read(env) == {}
    where.unlink()
    where.write_text(" " * (signin.CAP + 1))
    assert signin.read(env) == {}


def test_the_signed_in_provider_comes_after_the_environments_keys(env):
    signin.save("openai", {"OPENAI_BASE_URL": "http://local/v1"}, env)
    notice = io.StringIO()
    assert config.default_provider(env, notice) == "openai"
    assert config.default_provider({**env, "ANTHROPIC_API_KEY": "a"}, notice) == "anthropic"
    assert config.default_provider({**env, "ELELEM_PROVIDER": "stub"}, notice) == "stub"
    assert notice.getvalue() == ""


def test_keys_reads_the_signin_last_and_the_environment_wins_by_group(env, monkeypatch):
    signin.save("openai", {"OPENAI_BASE_URL": "http://local/v1", "OPENAI_API_KEY": "sk-in"}, env)
    assert keys.get("OPENAI_BASE_URL") == "http://local/v1"
    assert keys.get("OPENAI_API_KEY") == "sk-in"
    assert "sk-in" in keys.values()  # masked like any key
    assert "sk-in" not in keys.tool_env().values()  # never given to a tool
    # a key in the environment: the sign-in's server is not used with it, nor its key
    monkeypatch.setitem(keys._store, "OPENAI_API_KEY", "sk-env")
    assert keys.get("OPENAI_API_KEY") == "sk-env"
    assert keys.get("OPENAI_BASE_URL") == ""
    assert signin.provider(keys.environ()) is None
