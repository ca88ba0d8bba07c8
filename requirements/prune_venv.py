"""Uninstall what a venv holds beyond a lock file (run by `make setup`).

`pip install -r LOCK` only adds and upgrades; a package that a new lock no
longer lists (or one that an older, unlocked `pip install -e .[...]` pulled
in, such as rfc3987-syntax, issue #20) would stay installed and keep being
imported. This removes every installed distribution that LOCK does not pin,
except pip and the project itself, so the venv holds exactly the lock.

Usage: VENV/bin/python requirements/prune_venv.py LOCK
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys

KEEP = {"pip", "biokernels"}


def norm(name: str) -> str:
    """PEP 503 normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_names(lock: str) -> set[str]:
    names = set()
    with open(lock) as f:
        for line in f:
            m = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*==", line)
            if m:
                names.add(norm(m.group(1)))
    if not names:
        sys.exit(f"{lock}: no pinned requirements found")
    return names


def main() -> None:
    (lock,) = sys.argv[1:]
    keep = locked_names(lock) | KEEP
    extra = sorted({d.metadata["Name"] for d in importlib.metadata.distributions()
                    if d.metadata["Name"] and norm(d.metadata["Name"]) not in keep})
    if extra:
        print(f"removing packages that {lock} does not list: {' '.join(extra)}")
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "--yes", "--quiet", *extra], check=True)


if __name__ == "__main__":
    main()
