"""demo.py's server, after a 20 MiB line without a newline's worth of JSON-RPC (a line
too long to keep) and a line that is not JSON-RPC, in small pieces: it must still work."""

import runpy
import sys
from pathlib import Path

for _ in range(20 * 16):
    sys.stdout.write("x" * 65536)
sys.stdout.write("\nnot json either\n")
sys.stdout.flush()
sys.argv = [str(Path(__file__).with_name("demo.py"))]
runpy.run_path(sys.argv[0], run_name="__main__")
