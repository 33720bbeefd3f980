# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Stand-in for pip's get-pip.py, for sites that reach PyPI but not ci-files.testing.ansible.com.

ansible-test creates each sanity test's virtual environment without pip and runs a cached
get-pip script in it with pip's install arguments (``pip==24.2 --no-setuptools ...``). This
one installs the pip wheel Python bundles (ensurepip), then lets that pip install what was
asked for from the package index.
"""
from __future__ import annotations

import ensurepip
import os
import subprocess
import sys

# get-pip.py options that `pip install` does not know.
GET_PIP_ONLY = frozenset(("--no-setuptools", "--no-wheel"))


def main(argv: list[str]) -> int:
    """Bootstrap pip into the running interpreter, then install the requested packages."""
    # ensurepip points PIP_CONFIG_FILE at /dev/null in this process; the install that
    # follows must see the site's pip configuration (index, certificates) again.
    env = dict(os.environ)
    ensurepip.bootstrap(upgrade=True, default_pip=True)
    args = [arg for arg in argv if arg not in GET_PIP_ONLY]
    return subprocess.call([sys.executable, "-m", "pip", "install", *args], env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
