"""The entry-point pre-scan (plugins.may_declare_plugins): it may skip importlib.metadata
only where importlib.metadata would find no `elelem.plugins` entry point."""

import importlib.metadata
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from elelem_daemon import plugins
from elelem_daemon.plugins import ENTRY_POINT_GROUP, load_entry_points, may_declare_plugins
from elelem_daemon.registry import Registry

OTHER = "[console_scripts]\nsomething = some.module:main\n"
OURS = "[elelem.plugins]\nhello = elelem_hello\n"


def dist(root: Path, folder: str, entry_points: str | None) -> Path:
    info = root / folder
    info.mkdir(parents=True)
    name = folder.split("-")[0]
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "PKG-INFO").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)
    return info


def found(path: list[str]) -> list[str]:
    """What importlib.metadata itself finds in the group on that path."""
    return [
        point.name
        for d in importlib.metadata.distributions(path=path)
        for point in d.entry_points
        if point.group == ENTRY_POINT_GROUP
    ]


def layouts(root: Path) -> dict[str, list[str]]:
    """Folders laid out as installers leave them, each a sys.path of its own."""
    cases: dict[str, list[str]] = {}

    def case(name: str) -> Path:
        folder = root / name
        folder.mkdir()
        cases[name] = [str(folder)]
        return folder

    dist(case("empty-site"), "plain-1.0.dist-info", None)
    other = case("other-groups")
    dist(other, "tool-1.0.dist-info", OTHER)
    dist(other, "legacy-2.0.egg-info", OTHER)
    (other / "lone-1.0.egg-info").write_text("Metadata-Version: 1.0\nName: lone\n")  # a file
    dist(case("dist-info"), "Elelem_Hello-1.0.dist-info", OURS)
    dist(case("egg-info"), "elelem_hello-1.0-py3.11.egg-info", OURS)
    egg = case("eggs") / "elelem_hello-1.0-py3.11.egg"
    dist(egg, "EGG-INFO", OURS)
    cases["eggs"] = [str(egg)]
    zipped = root / "site.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("elelem_hello-1.0.dist-info/METADATA", "Name: elelem-hello\n")
        archive.writestr("elelem_hello-1.0.dist-info/entry_points.txt", OURS)
    cases["zip"] = [str(zipped)]
    cases["missing"] = [str(root / "nowhere")]
    return cases


def test_it_says_none_only_where_importlib_metadata_finds_none(tmp_path: Path) -> None:
    seen = {}
    for name, path in layouts(tmp_path).items():
        declared, really = may_declare_plugins(path), found(path)
        seen[name] = (declared, bool(really))
        assert declared or not really, (name, really)  # never a plugin skipped
    assert seen == {
        "empty-site": (False, False),
        "other-groups": (False, False),
        "dist-info": (True, True),
        "egg-info": (True, True),
        "eggs": (True, True),
        "zip": (True, True),  # a zip is never ruled out: importlib reads it
        "missing": (False, False),
    }


def test_what_it_cannot_rule_out_goes_to_importlib_metadata(tmp_path, monkeypatch) -> None:
    site = tmp_path / "site"
    info = dist(site, "huge-1.0.dist-info", None)
    (info / "entry_points.txt").write_bytes(b"#" * (plugins.MAX_ENTRY_POINTS + 1))
    assert may_declare_plugins([str(site)])  # too long to read whole: not ruled out
    assert not may_declare_plugins([str(tmp_path / "nowhere")])
    assert may_declare_plugins([Path(site)])  # type: ignore[list-item]  # not a str

    class Finder:
        @staticmethod
        def find_distributions(*args, **kwargs):
            return iter(())

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    assert may_declare_plugins([str(tmp_path / "nowhere")])  # another finder may know one


def test_a_declared_plugin_still_loads_and_a_broken_one_is_still_reported(
    tmp_path, monkeypatch, capsys
) -> None:
    site = tmp_path / "site"
    dist(site, "elelem_hello-1.0.dist-info", OURS + "broken = elelem_broken\n")
    (site / "elelem_hello.py").write_text(
        "def register(plugin):\n    plugin.provider('hello', lambda model=None: 'hi')\n"
    )
    (site / "elelem_broken.py").write_text("raise RuntimeError('nope')\n")
    monkeypatch.syspath_prepend(str(site))
    registry = load_entry_points(Registry())
    assert registry.build_provider("hello") == "hi"
    errors = {o.name: o.error for o in registry.origins}
    assert errors == {"hello": None, "broken": "RuntimeError: nope"}
    assert "elelem: failed to load plugin elelem_broken: nope" in capsys.readouterr().err
    for name in ("elelem_hello", "elelem_broken"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize("declared", [False, True])
def test_the_daemons_plugins_import_importlib_metadata_only_if_a_package_may_declare_one(
    tmp_path: Path, declared: bool
) -> None:
    site = tmp_path / "site"
    dist(site, "elelem_hello-1.0.dist-info", OURS if declared else OTHER)
    (site / "elelem_hello.py").write_text(
        "def register(plugin):\n    plugin.provider('hello', lambda model=None: 'hi')\n"
    )
    probe = (
        "import sys\n"
        "from elelem_daemon.plugins import core_registry\n"
        "registry = core_registry()\n"
        "print('importlib.metadata' in sys.modules, 'hello' in registry.provider_names())\n"
    )
    env = dict(os.environ, PYTHONPATH=str(site))
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(declared), str(declared)]
