#!/usr/bin/env python3
"""Instructions per item of one measured_* function of bnxt_post_poll_bench (README.md).

Reads a callgrind profile collected with --toggle-collect=<the function>, so that every
instruction counted ran inside it, and prints

    (instructions - the simulated doorbell's model) / (calls x items per call)

where the model is everything below rig::sim's BarTransport::write: the simulated bus
and the bnxt model a doorbell store reaches (hardware takes one 8-byte store there). The
driver and its pci::Window accesses stay counted.

usage: callgrind_per_item.py PROFILE FUNCTION ITEMS_PER_CALL
"""
import re
import subprocess
import sys

MODEL = "BarTransport::write("


def count(text: str) -> int:
    return int(text.replace(",", ""))


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    profile, function, per_call = sys.argv[1], sys.argv[2], int(sys.argv[3])
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--tree=caller", "--threshold=100", profile],
                         check=True, capture_output=True, text=True).stdout
    total = model = 0
    calls = None
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if m := re.match(r"\s*([\d,]+)\s.*PROGRAM TOTALS", line):
            total = count(m.group(1))
        m = re.match(r"\s*([\d,]+) \([ \d.]+%\)  \*  (.*)", line)
        if not m:
            continue
        if MODEL in m.group(2):
            model = max(model, count(m.group(1)))
        if f"{function}(" in m.group(2) and calls is None:
            # The callers above the function's line give its calls.
            calls = 0
            for before in reversed(lines[:i]):
                c = re.match(r"\s*[\d,]+ \([ \d.]+%\)  <\s+.*\(([\d,]+)x\)", before)
                if not c:
                    break
                calls += count(c.group(1))
    if not calls:
        print(f"{function}: not found in {profile}", file=sys.stderr)
        return 1
    items = calls * per_call
    print(f"{function}: {total:,} instructions, {model:,} in the doorbell's model, {calls:,} calls x {per_call}: "
          f"{(total - model) / items:.1f} per item")
    return 0


if __name__ == "__main__":
    sys.exit(main())
