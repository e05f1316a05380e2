"""``python -m kandev_nb.bench <name> [args]``: see :mod:`kandev_nb.bench`."""

from __future__ import annotations

import sys

from kandev_nb.bench import available, run


def main(argv: list[str]) -> int:
    names = available()
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in names:
        print(f"usage: python -m kandev_nb.bench {{{','.join(names)}}} [args]", file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    return run(argv[0], argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
