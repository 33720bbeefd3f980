#!/usr/bin/env bash
# ansible-test sanity for ascendops.gr00t, on the local Python 3.11, with no container and no
# network beyond PyPI (which only the first run needs).
#   tests/sanity/run.sh [more ansible-test sanity options]
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
collection="$repo/collections/ansible_collections/ascendops/gr00t"

# ansible-test finds the collection from its working directory, which the kernel reports as the
# link's target (the repository root, outside any ansible_collections tree): name it instead.
export ANSIBLE_TEST_CONTENT_ROOT="$collection"

# Each sanity test runs in a virtual environment of its own, cached under ~/.ansible/test/venv.
# ansible-test bootstraps pip into a new one with a get-pip script from
# ci-files.testing.ansible.com; get_pip.py does the same from PyPI.
pip_version="$(python3 -c 'import inspect, re
from ansible_test._internal import python_requirements as r
print(re.search(r"pip=.([0-9.]+).", inspect.getsource(r.get_venv_packages)).group(1))')"
get_pip="$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
if [ ! -f "$get_pip" ]; then
  mkdir -p "$(dirname "$get_pip")"
  cp "$repo/tests/sanity/get_pip.py" "$get_pip"
fi

# ansible-test writes its scratch files to tests/output; remove them unless they were there before.
if [ ! -e "$collection/tests/output" ]; then
  trap 'rm -rf "$collection/tests/output"' EXIT
fi

cd "$collection"
ansible-test sanity --local --python 3.11 --color "$@"
