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
    "MY_SERVICE_KEY",  # issue 29: any *_KEY, *_SECRET, *_TOKEN, *PASSWORD*
    "STRIPE_SECRET",
    "SLACK_BOT_TOKEN",
    "MYSQL_ROOT_PASSWORD",
    "PASSWORD_FOR_DB",
    "password",
    "TOKEN",
    "DB_PASS",  # issue 36: names the first patterns let through
    "MYSQL_PWD",
    "SMTP_PASS",
    "SENTRY_DSN",
    "SLACK_WEBHOOK_URL",
    "GH_PAT",
    "CI_JOB_JWT",
    "NPM_CONFIG__AUTH",
    "NPM_CONFIG__AUTHTOKEN",
    "PRIVATE_KEY_PEM",
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
    "ELELEM_TOOL_ENV_KEEP_KEYS",
    "KEYBOARD_LAYOUT",
    "DATABASE_URL",  # by name; its value decides (test_a_url_with_a_password_is_secret)
    "GIT_ASKPASS",  # a program, not a password
    "SSH_ASKPASS",
    "PWD",
    "OLDPWD",
    "GOPATH",
    "XAUTHORITY",
]


@pytest.mark.parametrize("name", SECRET)
def test_secret_names(name: str) -> None:
    assert keys.secret(name)


@pytest.mark.parametrize("name", PLAIN)
def test_plain_names(name: str) -> None:
    assert not keys.secret(name)


@pytest.mark.parametrize(
    "value",
    [
        "postgres://app:hunter2@db.example.com:5432/app",
        "mysql+pymysql://root:pw@127.0.0.1/x",
        "https://user:tok%40en@example.com/",
        "redis://:only-a-password@cache:6379/0",
    ],
)
def test_a_url_with_a_password_is_secret(value: str) -> None:
    assert keys.secret("DATABASE_URL", value)
    assert keys.url_password(value)


@pytest.mark.parametrize(
    "value",
    [
        "https://ghp_0123456789abcdefghijABCDEFGHIJ012345@github.com/o/r.git",
        "https://glpat-x1y2z3a4b5c6d7e8f9g0@gitlab.com/o/r.git",
        "https://0123456789abcdef0123456789abcdef@o12345.ingest.sentry.io/678",
    ],
)
def test_a_url_with_a_token_as_its_user_is_secret(value: str) -> None:
    assert keys.secret("REPO_URL", value)
    assert keys.url_token(value)


@pytest.mark.parametrize(
    "value",
    [
        "https://git@github.com/o/r.git",
        "ssh://git@github.com/o/r.git",
        "https://first.last-of-a-long-name@example.com/",
        "https://averyveryverylongusername@example.com/",  # no digit: a name
        "https://example.com/ghp_0123456789abcdefghij@x",
    ],
)
def test_a_url_with_a_user_name_is_not(value: str) -> None:
    assert not keys.secret("REPO_URL", value)


@pytest.mark.parametrize(
    "value",
    [
        "postgres://app@db.example.com/app",
        "https://example.com/a:b@c",
        "https://example.com/?q=a:b@c",
        "user:pw@host",
        "postgres://app:@db/app",
        "",
    ],
)
def test_a_url_without_a_password_is_not(value: str) -> None:
    assert not keys.secret("DATABASE_URL", value)


def test_a_proxy_with_a_password_stays_for_the_daemon_not_for_tools(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(keys, "_store", {})
    monkeypatch.setattr(keys, "_taken", False)
    environ = {"HTTPS_PROXY": "http://u:pw@proxy:3128", "DATABASE_URL": "postgres://u:pw@h/d"}
    taken = keys.take(environ)  # type: ignore[arg-type]
    assert taken == ["DATABASE_URL"] and "HTTPS_PROXY" in environ
    monkeypatch.setenv("HTTPS_PROXY", "http://u:pw@proxy:3128")
    assert "HTTPS_PROXY" not in keys.tool_env()


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
