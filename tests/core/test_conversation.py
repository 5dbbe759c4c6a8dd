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
