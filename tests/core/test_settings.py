"""config.number: a numeric setting that is not a number keeps its default and says so."""

import os
import subprocess
import sys

import pytest

from elelem_daemon.base.config import number


@pytest.mark.parametrize("raw", ["abc", "nan", "inf", "-5", "1e999"])
def test_a_bad_value_keeps_the_default_and_is_named(raw, capsys):
    assert number("ELELEM_TOOL_TIMEOUT", 120, env={"ELELEM_TOOL_TIMEOUT": raw}) == 120
    err = capsys.readouterr().err
    assert err.startswith("elelem: ELELEM_TOOL_TIMEOUT=") and "using 120" in err


def test_a_cap_below_its_minimum_keeps_the_default(capsys):
    assert number("ELELEM_READ_CAP", 100000, minimum=1, env={"ELELEM_READ_CAP": "0"}) == 100000
    assert "ELELEM_READ_CAP='0' is not a number >= 1" in capsys.readouterr().err


def test_a_good_value_or_none_says_nothing(capsys):
    assert number("X", 30, env={"X": " 2.5 "}) == 2.5
    assert number("X", 30, env={}) == 30 and number("X", 30, env={"X": ""}) == 30
    assert capsys.readouterr().err == ""


def test_a_typo_in_a_setting_leaves_the_tools_working(tmp_path):
    """Before, `float("abc")` at import failed the shell plugin: `execute` was gone."""
    env = dict(os.environ, ELELEM_TOOL_TIMEOUT="abc", ELELEM_STATE_DIR=str(tmp_path / "state"))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "elelem_daemon",
            "ask",
            "-p",
            "stub",
            '!tool execute {"command": "echo settled"}',
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "ELELEM_TOOL_TIMEOUT='abc' is not a number >= 0; using 120" in run.stderr
    assert "failed to load plugin" not in run.stderr
    assert "unknown tool" not in run.stdout + run.stderr
    assert "execute(echo settled)" in run.stdout + run.stderr  # a known tool, asked for


def test_config_toml_is_read_bounded_by_its_one_reader(tmp_path):
    """config.toml (provider, prices) is read by one function, at most CONFIG_CAP bytes."""
    import pytest

    from elelem_daemon.base.config import CONFIG_CAP, config_table
    from elelem_daemon.base.errors import ElelemError

    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    (tmp_path / "elelem").mkdir()
    path = tmp_path / "elelem" / "config.toml"
    assert config_table(env) == {}
    path.write_text('provider = "stub"\n')
    assert config_table(env) == {"provider": "stub"}
    path.write_text("# " + "x" * CONFIG_CAP + "\n")
    with pytest.raises(ElelemError, match="larger than"):
        config_table(env)
    path.write_bytes(b'provider = "\xff"\n')
    with pytest.raises(ElelemError, match="cannot read"):
        config_table(env)
