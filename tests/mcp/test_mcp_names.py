"""The name rule (docs/mcp.md, Names): providers' limits, deterministic, no collision."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from elelem_daemon.mcp.names import prefixes, prompt_names, tool_names

VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_plain_names_keep_their_plain_form() -> None:
    assert prefixes(["github", "my-db"]) == {"github": "github", "my-db": "my-db"}
    assert tool_names("github", ["create_issue"]) == {"create_issue": "github__create_issue"}
    assert prompt_names("github", ["review"]) == {"review": "github:review"}


def test_characters_outside_the_set_become_underscores() -> None:
    assert prefixes(["my.server"]) == {"my.server": "my_server"}
    assert prefixes(["__a__b__"]) == {"__a__b__": "a_b"}  # the first `__` ends the prefix
    assert tool_names("s", ["get.file/v2"]) == {"get.file/v2": "s__get_file_v2"}
    assert prefixes(["..."]) == {"...": "mcp"}


def test_collisions_get_a_hash_and_the_first_in_sorted_order_keeps_the_plain_name() -> None:
    got = prefixes(["a.b", "a_b"])
    assert got["a.b"] == "a_b"
    assert got["a_b"].startswith("a_b_") and got["a_b"] != "a_b"
    tools = tool_names("s", ["x.y", "x_y"])
    assert tools["x.y"] == "s__x_y" and tools["x_y"] != "s__x_y"


def test_long_names_are_cut_with_a_hash_deterministically() -> None:
    long = "t" * 200
    first = tool_names("server", [long, long + "2"])
    again = tool_names("server", [long + "2", long])
    assert first == again
    assert all(len(name) <= 64 for name in first.values())
    assert len(set(first.values())) == 2
    assert len(prefixes(["s" * 50])["s" * 50]) <= 24


def test_taken_names_are_avoided() -> None:
    assert tool_names("s", ["t"], taken=["s__t"])["t"] != "s__t"


@given(
    st.lists(st.text(min_size=1, max_size=80), min_size=1, max_size=8, unique=True),
    st.lists(st.text(min_size=1, max_size=150), min_size=1, max_size=8, unique=True),
)
def test_every_name_fits_the_providers_and_none_collides(
    servers: list[str], tools: list[str]
) -> None:
    seen: set[str] = set()
    for prefix in prefixes(servers).values():
        for name in tool_names(prefix, tools).values():
            assert VALID.match(name), name
            assert name not in seen
            seen.add(name)
