"""elelem_daemon.base.keys: which names are secret, the start-up move out of the
environment (and out of /proc/self/environ), and what tools get."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from elelem_daemon.base import keys

SECRET = [
    "OPENAI_API_KEY",
    "GROQ_API_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "HF_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "DB_PASSWORD",
    "PGPASSWORD",
    "CLIENT_SECRET",
    "MY_SECRET_THING",
    "SSH_PRIVATE_KEY",
    "AZURE_CREDENTIALS",
    "openai_api_key",
]
PLAIN = [
    "PATH",
    "HOME",
    "OPENAI_BASE_URL",
    "OPENAI_MAX_TOKENS",
    "ANTHROPIC_MAX_TOKENS",
    "TOKENIZERS_PARALLELISM",
    "SSH_AUTH_SOCK",
    "OLLAMA_HOST",
    "ELELEM_TOOL_ENV_KEEP",
]


@pytest.mark.parametrize("name", SECRET)
def test_secret_names(name: str) -> None:
    assert keys.secret(name)


@pytest.mark.parametrize("name", PLAIN)
def test_plain_names(name: str) -> None:
    assert not keys.secret(name)


PROBE = """
import json, os, subprocess, sys
from elelem_daemon.base import keys
taken = sorted(keys.take())
block = open("/proc/self/environ", "rb").read()
child = subprocess.run(["cat", f"/proc/{os.getpid()}/environ"], capture_output=True).stdout
print(json.dumps({
    "taken": taken,
    "in_block": b"canary" in block,
    "in_child_view": b"canary" in child,
    "block_kept_path": b"PATH=" in block,
    "in_environ": [k for k in os.environ if "canary" in os.environ[k]],
    "get": keys.get("OPENAI_API_KEY"),
    "tool": sorted(k for k, v in keys.tool_env().items() if "canary" in v),
    "all": sorted(k for k in keys.environ() if keys.secret(k)),
}))
"""


def probe(**extra: str) -> dict:
    env = {
        "PATH": os.environ["PATH"],
        "OPENAI_API_KEY": "sk-canary-1",
        "GITHUB_TOKEN": "ghp-canary-2",
        "DB_PASSWORD": "canary-3",
        **extra,
    }
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_take_moves_the_keys_out_of_every_view_of_the_environment() -> None:
    seen = probe()
    assert seen["taken"] == ["DB_PASSWORD", "GITHUB_TOKEN", "OPENAI_API_KEY"]
    assert seen["block_kept_path"] and not seen["in_block"] and not seen["in_child_view"]
    assert seen["in_environ"] == [] and seen["get"] == "sk-canary-1"
    assert seen["tool"] == []
    assert seen["all"] == ["DB_PASSWORD", "GITHUB_TOKEN", "OPENAI_API_KEY"]


def test_the_keep_list_and_keep_keys() -> None:
    assert probe(ELELEM_TOOL_ENV_KEEP="GITHUB_TOKEN,DB_*")["tool"] == [
        "DB_PASSWORD",
        "GITHUB_TOKEN",
    ]
    assert probe(ELELEM_TOOL_ENV_KEEP_KEYS="1")["tool"] == [
        "DB_PASSWORD",
        "GITHUB_TOKEN",
        "OPENAI_API_KEY",
    ]


def test_os_environ_proc_environ_is_not_enough_on_its_own() -> None:
    """Why take() wipes the block: popping from os.environ leaves /proc/self/environ."""
    code = (
        "import os; os.environ.pop('OPENAI_API_KEY');"
        "print(b'canary' in open('/proc/self/environ', 'rb').read())"
    )
    env = {"PATH": os.environ["PATH"], "OPENAI_API_KEY": "sk-canary-1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "True"


def test_a_key_set_later_is_found_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZZ_TEST_API_KEY", "later")
    assert keys.get("ZZ_TEST_API_KEY") == "later"
    assert "ZZ_TEST_API_KEY" not in keys.tool_env()
