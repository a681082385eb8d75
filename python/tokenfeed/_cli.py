"""The `tokenfeed` command a wheel installs: runs the native program shipped
inside the package (tokenfeed/_bin/tokenfeed), with the same arguments,
standard streams, signals and exit code. Not used in a source build, where
the program is build/release/src/cli/tokenfeed."""

from __future__ import annotations

import os
import pathlib
import sys


def program() -> pathlib.Path:
    return pathlib.Path(__file__).resolve().parent / "_bin" / "tokenfeed"


def main() -> None:
    path = program()
    if not os.access(path, os.X_OK):
        sys.stderr.write(f"tokenfeed: the program is missing from this installation ({path}); "
                         "reinstall the package\n")
        raise SystemExit(1)
    # exec replaces this process, so signals (SIGTERM to serve) and the exit
    # status are the program's own.
    os.execv(str(path), [str(path), *sys.argv[1:]])


if __name__ == "__main__":
    main()
