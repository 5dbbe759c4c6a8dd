"""Drive one turn of the daemon over stdio and print what crosses the wire.

python examples/one_turn.py                  # the stub provider, prompt "hello"
python examples/one_turn.py "!tool list {}"  # a stub-scripted tool call
python examples/one_turn.py -p openai "explain this repo"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from elelem_daemon.client import Client, RpcError


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompt", nargs="?", default="hello")
    parser.add_argument("-p", "--provider", default="stub")
    options = parser.parse_args()

    async def ask(params: dict) -> str | None:  # the daemon's questions, answered here
        return input(f"{params['prompt']} ")

    async with await Client.spawn("--provider", options.provider, on_ask=ask) as client:
        info = await client.initialize(process_id=os.getpid())
        print("initialize ->", json.dumps(info))
        session = await client.new_session()
        print("session/new ->", session["sessionId"], [t["name"] for t in session["tools"]])

        def show(event: dict) -> None:
            params = {k: v for k, v in event["params"].items() if k != "sessionId"}
            print(f"  {event['method']} {json.dumps(params)}")

        result = await client.turn(session["sessionId"], options.prompt, on_event=show)
        print("session/turn ->", json.dumps(result))
    return 0


def run() -> int:
    """main(), with a daemon's error answer as one line on stderr and exit code 1."""
    try:
        return asyncio.run(main())
    except RpcError as exc:
        print(f"one_turn.py: {exc.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(run())
