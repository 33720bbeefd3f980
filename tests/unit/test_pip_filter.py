"""pip_options: mirror settings to pip arguments."""
from __future__ import annotations

import pytest

from ansible_collections.ascendops.gr00t.plugins.filter.pip import pip_options


def test_no_index_without_index_url() -> None:
    assert pip_options() == ["--no-index"]
    assert pip_options("", [], "/srv/wheels") == ["--no-index", "--find-links", "/srv/wheels"]


def test_full_mirror_settings() -> None:
    assert pip_options("http://mirror/simple", ["http://extra/simple"], ["/w1", "http://w2/"], ["mirror"]) == [
        "--index-url", "http://mirror/simple",
        "--extra-index-url", "http://extra/simple",
        "--find-links", "/w1", "--find-links", "http://w2/",
        "--trusted-host", "mirror",
    ]


def test_extra_index_needs_index() -> None:
    with pytest.raises(ValueError, match="pip_index_url"):
        pip_options(None, ["http://extra/simple"])
