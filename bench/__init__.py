"""The elelem-daemon benchmark: `python -m bench` prints one table of figures.

Each figure is measured side by side with a baseline in the same run, so the ratio
means something on a noisy machine. `--quick` uses small sizes (for CI); a timing
never fails a run, only a crash does.
"""
