import pytest

from elelem_daemon.conversation import Conversation
from elelem_daemon.transcript import SystemPrompt, Transcript


def test_add_keeps_order_and_roles():
    conversation = Conversation()
    conversation.add("user", "hi")
    conversation.add("assistant", "hello")
    assert list(conversation) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    assert conversation.last == {"role": "assistant", "content": "hello"}
    assert len(conversation) == 2


def test_rejects_other_roles():
    with pytest.raises(ValueError, match="invalid role: system"):
        Conversation().add("system", "no")


def test_the_transcript_puts_the_system_prompt_first_and_clear_empties(tmp_path):
    conversation = Conversation([{"role": "user", "content": "hi"}])
    transcript = Transcript(SystemPrompt("sys", tmp_path), conversation)
    assert transcript.messages() == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
    ]
    conversation.clear()
    assert transcript.messages() == [{"role": "system", "content": "sys"}]


def test_system_prompt_default_and_agents_md_walking_up_to_the_repository_root(tmp_path):
    repo = tmp_path / "repo"
    inner = repo / "a" / "b"
    inner.mkdir(parents=True)
    (repo / ".git").mkdir()
    prompt = SystemPrompt(cwd=inner)
    assert prompt.render() == "You are a terminal coding agent."
    (tmp_path / "AGENTS.md").write_text("Above the repository: not the project's.\n")
    assert prompt.render() == "You are a terminal coding agent."
    (repo / "AGENTS.md").write_text("Run bin/test.\n")
    assert prompt.render() == "You are a terminal coding agent.\n\nRun bin/test."
    (repo / "a" / "AGENTS.md").write_text("Nearer.\n")
    assert prompt.render().endswith("\n\nNearer.")


def test_outside_a_repository_only_the_working_directorys_agents_md_counts(tmp_path):
    inner = tmp_path / "a"
    inner.mkdir()
    (tmp_path / "AGENTS.md").write_text("A parent's.\n")
    prompt = SystemPrompt(cwd=inner)
    assert prompt.render() == "You are a terminal coding agent."
    (inner / "AGENTS.md").write_text("Its own.\n")
    assert prompt.render().endswith("Its own.")


def test_transcript_renders_the_system_prompt_fresh_every_time(tmp_path):
    transcript = Transcript(SystemPrompt(cwd=tmp_path))
    transcript.conversation.add("user", "hi")
    first = transcript.messages()
    (tmp_path / "AGENTS.md").write_text("new rules")
    second = transcript.messages([{"role": "tool", "content": "{}"}])
    assert first[0]["content"] == "You are a terminal coding agent."
    assert second[0]["content"].endswith("new rules")
    assert [m["role"] for m in second] == ["system", "user", "tool"]


def test_custom_template_replaces_the_default(tmp_path):
    assert SystemPrompt("Be brief.", tmp_path).render() == "Be brief."
    assert SystemPrompt(lambda cwd: f"in {cwd.name}", tmp_path).render() == f"in {tmp_path.name}"


def test_turn_marks_only_grow_and_a_rewind_cuts_back_to_one() -> None:
    heard: list[tuple[str, object]] = []
    kept = Conversation()
    kept.listeners.append(lambda event, message: heard.append((event, message)))
    kept.begin_turn(1, at=10.0)
    kept.add("user", "one")
    kept.add("assistant", "1")
    for bad in (1, 0, -1, True, "2", None):
        with pytest.raises(ValueError):
            kept.begin_turn(bad)  # type: ignore[arg-type]
    kept.begin_turn(3)
    kept.add("user", "three")
    kept.clear()
    kept.begin_turn(4)
    kept.add("user", "four")
    assert kept.prompt_of(3) == {"role": "user", "content": "three"}
    assert kept.rewind(3) == [3, 4]  # the clear since turn 3 is undone too
    assert [m["content"] for m in kept] == ["one", "1"]
    with pytest.raises(KeyError):
        kept.rewind(3)  # dropped: not held any more
    kept.begin_turn(5)  # numbers never come back
    assert sorted(kept.marks) == [1, 5] and kept.last_turn == 5
    assert ("rewind", {"turn": 3}) in heard and ("turn", {"turn": 1, "at": 10.0}) in heard
