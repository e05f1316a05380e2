"""The read-only kernel tools on a huge container (issue 24, 10): ms per call, and the baseline.

Run: ``python benchmarks/bench_kernel_tools.py [--entries 3000000]``. A namespace holds a dict of
`--entries` string keys; ``list_variables`` and ``inspect_variable`` (the kernel tools, in this
process, without the CLI) are timed, against what the tools did before: a full copy of the dict
and its whole ``repr`` (the time the kernel's event loop was blocked per call). Prints ms per
call and, last, ``headline: full copy + repr of a <n>-entry dict: <ratio>x inspect_variable``
(how many times longer the old way blocks than the tool now does). Asserts nothing.

Measured in a real kernel by tests/kernel_tools/test_reach_in_kernel.py (3 million entries,
three tool calls in one turn): the loop's longest lag was 23 ms (before: 24-31 s, and peak
memory +720 MB).
"""

from __future__ import annotations

import argparse
import time

from _common import headline, use_this_clone

use_this_clone()

from kandev_nb.kernel_tools import KernelTools


def _ms(call: object, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        call()  # type: ignore[operator]
        best = min(best, (time.perf_counter() - began) * 1000)
    return best


def main() -> None:
    """Parse the options, time the tools and the baseline, print the table and the headline."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=3_000_000)
    args = parser.parse_args()
    big = {f"key{i}": i for i in range(args.entries)}
    tools = KernelTools(namespace={"big": big})
    rows = {
        "list_variables": _ms(tools.list_variables),
        "inspect_variable big": _ms(lambda: tools.inspect_variable("big")),
        "baseline: dict(big) + repr": _ms(lambda: repr(dict(big)), repeat=1),
    }
    for label, ms in rows.items():
        print(f"{label:28} {ms:10.1f} ms")
    ratio = rows["baseline: dict(big) + repr"] / rows["inspect_variable big"]
    headline(f"full copy + repr of a {args.entries}-entry dict", ratio, "inspect_variable")


if __name__ == "__main__":
    main()
