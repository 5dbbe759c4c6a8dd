"""No tool outlives its face (issue 13, item 8): SIGKILL of the daemon, or a face that
dies of SIGTERM or SIGHUP, leaves no process of a running `execute` behind, however
the command forked (background jobs, subshells, nested shells, a group leader that
already exited). The direct child dies by its parent-death signal; the rest by the
reaper (elelem_daemon/processes/reaper.py), which itself exits once it has done its work."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from elelem_daemon.jsonrpc.client import Client

from .conftest import all_gone, anywhere, cmdline, tree_with, within

pytestmark = pytest.mark.e2e

COMMANDS = {
    "background jobs": "sleep 301 & sleep 302; wait",
    "subshells and nested shells": "(sleep 303 &); bash -c 'sleep 304 & wait' & sleep 305",
    "the leader exec'd away": "sleep 306 & exec sleep 307",
}


def reaper_of(daemon: int) -> set[int]:
    """The reaper watching the daemon's tools (its command line ends with the pid)."""
    return {
        int(p)
        for p in os.listdir("/proc")
        if p.isdigit() and cmdline(int(p)).endswith(f"elelem_daemon/processes/reaper.py {daemon}")
    }


async def started(client: Client, command: str, needle: str) -> set[int]:
    """Start a turn running command; return its processes once `needle` runs."""
    session = (await within(client.new_session()))["sessionId"]
    call = json.dumps({"command": command})
    await within(client.start_turn(session, f"!tool execute {call}"))
    return await tree_with(client.process.pid, needle)


@pytest.mark.parametrize("how", list(COMMANDS))
async def test_sigkill_of_the_daemon_leaves_no_tool_behind(client: Client, how: str) -> None:
    command = COMMANDS[how]
    numbers = re.findall(r"sleep (\d+)", command)
    pids = await started(client, command, f"sleep {numbers[-1]}")
    for number in numbers:  # every sleep, in the daemon's tree or not (a subshell's)
        pids |= await anywhere(f"sleep {number}", exact=True)
    reaper = reaper_of(client.process.pid)
    assert len(reaper) == 1, "no reaper runs beside the daemon"
    assert not reaper & pids, "the reaper is in the tool's process tree"
    client.process.send_signal(signal.SIGKILL)
    await within(client.process.wait())
    assert await all_gone(pids) == [], [cmdline(p) for p in pids]
    assert await all_gone(reaper) == []  # it did its work and left


async def face(args: list[str], env: dict[str, str], cwd: Path, **more: Any) -> Any:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "elelem_daemon",
        *args,
        env=env,
        cwd=str(cwd),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        **{"stdin": asyncio.subprocess.PIPE, **more},
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
async def test_the_terminal_face_killed_by_a_signal_leaves_no_tool_behind(
    env: dict[str, str], workdir: Path, sig: int
) -> None:
    command = "sleep 311 & sleep 312; wait"
    process = await face(
        [
            "ask",
            "--provider",
            "stub",
            "--no-save",
            f"!tool execute {json.dumps({'command': command})}",
        ],
        env,
        workdir,
        stdin=asyncio.subprocess.DEVNULL,  # `ask` appends piped input: there is none
    )
    try:
        pids = await tree_with(process.pid, "sleep 312", 30)
        process.send_signal(sig)
        await within(process.wait())
        assert await all_gone(pids) == [], [cmdline(p) for p in pids]
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
async def test_the_acp_face_killed_by_a_signal_leaves_no_tool_behind(
    env: dict[str, str], workdir: Path, sig: int
) -> None:
    process = await face(["--acp", "--provider", "stub"], env, workdir)
    assert process.stdin is not None and process.stdout is not None

    async def ask(id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
        process.stdin.write(json.dumps(message).encode() + b"\n")
        await process.stdin.drain()
        while True:
            answer = json.loads(await within(process.stdout.readline(), 30))
            if answer.get("id") == id:
                return answer

    try:
        await ask(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        new = await ask(2, "session/new", {"cwd": str(workdir), "mcpServers": []})
        command = json.dumps({"command": "sleep 321 & sleep 322; wait"})
        prompt = {
            "sessionId": new["result"]["sessionId"],
            "prompt": [{"type": "text", "text": f"!tool execute {command}"}],
        }
        process.stdin.write(
            json.dumps(
                {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt}
            ).encode()
            + b"\n"
        )
        await process.stdin.drain()
        pids = await tree_with(process.pid, "sleep 322", 30)
        process.send_signal(sig)
        await within(process.wait())
        assert await all_gone(pids) == [], [cmdline(p) for p in pids]
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def test_a_tool_registers_its_group_with_the_reaper_before_it_runs_anything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The window between a tool's fork and the daemon's `reaper.watch`: a daemon
    SIGKILLed in it left the tool's grandchildren behind. The child itself says `+PID`
    to the reaper first (procs.tool_preexec), before its command runs."""
    import subprocess

    from elelem_daemon.processes import procs

    read, write = os.pipe()
    monkeypatch.setattr(procs.reaper, "fd", write)
    try:
        child = subprocess.Popen(
            ["sh", "-c", "exit 0"], start_new_session=True, preexec_fn=procs.tool_preexec()
        )
        child.wait(30)
        os.close(write)
        told = os.read(read, 4096)
    finally:
        os.close(read)
    assert told == b"+%d\n" % child.pid  # its group: a session of its own, so its pid


def test_a_tool_runs_when_the_reaper_is_gone() -> None:
    """No reaper reads the pipe (it could not start, or died): the child's `+PID`
    meets EPIPE, whose SIGPIPE must not kill the tool (it did: exit -13)."""
    import subprocess

    from elelem_daemon.processes import procs

    read, write = os.pipe()
    os.close(read)
    kept = procs.reaper.fd
    procs.reaper.fd = write
    try:
        done = subprocess.run(
            ["sh", "-c", "echo ran; yes | head -c 3 >/dev/null; echo $?"],
            start_new_session=True,
            preexec_fn=procs.tool_preexec(),
            capture_output=True,
            timeout=30,
        )
    finally:
        procs.reaper.fd = kept
        os.close(write)
    assert (done.returncode, done.stdout) == (0, b"ran\n0\n")  # and SIGPIPE is as it was
