"""registry/agent.json: the ACP Registry's entry, valid against the registry's own schema
(vendored: tests/install/README.md) and in step with the package."""

from __future__ import annotations

import json
import tomllib
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import jsonschema

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "registry" / "agent.json"


def entry() -> dict:
    return json.loads(ENTRY.read_text())


def test_the_entry_validates_against_the_registry_schema() -> None:
    schema = json.loads((Path(__file__).parent / "agent.schema.json").read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.validate(entry(), schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def test_the_schema_refuses_a_broken_entry() -> None:
    """The check can fail: an entry without a distribution is refused."""
    schema = json.loads((Path(__file__).parent / "agent.schema.json").read_text())
    broken = {k: v for k, v in entry().items() if k != "distribution"}
    errors = list(jsonschema.Draft7Validator(schema).iter_errors(broken))
    assert errors


def test_the_entry_is_this_release_installed_with_uvx_as_an_acp_agent() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    data = entry()
    assert data["version"] == project["version"]
    uvx = data["distribution"]["uvx"]
    assert uvx["package"] == f"{project['name']}=={project['version']}"
    assert uvx["package"].split("==")[0] in project["scripts"]  # what uvx runs
    assert uvx["args"] == ["daemon", "--acp"]


def test_the_icon_is_a_16_by_16_svg() -> None:
    assert entry()["icon"] == "./icon.svg"
    root = ElementTree.parse(ROOT / "registry" / "icon.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert (root.get("width"), root.get("height")) == ("16", "16")


def test_the_package_says_the_same_version() -> None:
    import elelem_daemon

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert elelem_daemon.__version__ == project["version"] == entry()["version"]
