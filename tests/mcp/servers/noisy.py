"""A real server (demo.py's) that first prints a line that is not JSON-RPC to stdout
and a lot to stderr: it must still work."""

import runpy
import sys
from pathlib import Path

print("starting up, please wait...", flush=True)
sys.stderr.write("x" * 100_000 + "\n")
sys.stderr.write("noisy: ready\n")
sys.stderr.flush()
sys.argv = [str(Path(__file__).with_name("demo.py"))]
runpy.run_path(sys.argv[0], run_name="__main__")
