"""pip_options: mirror settings to pip arguments."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.ascendops.gr00t.plugins.filter.pip import pip_options, torch_npu_listed_for


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


# Ascend/pytorch COMPATIBILITY table as published (torch 2.7.1 rows).
PUBLISHED = {
    "2.7.1": ["8.3.RC1"],
    "2.7.1.post2": ["8.5.0"],
    "2.7.1.post4": ["9.0.0"],
    "2.7.1.post8": ["9.1.0"],
}


def test_torch_npu_listed_for_names_post4_for_cann_9() -> None:
    assert torch_npu_listed_for(PUBLISHED, "9.0.0") == ["2.7.1.post4"]
    assert torch_npu_listed_for(PUBLISHED, "8.3.rc1") == ["2.7.1"]
    assert torch_npu_listed_for(PUBLISHED, "7.0.0") == []


def test_role_default_table_is_the_published_one() -> None:
    """The port's pair (post2 on CANN 9.0.0) is unlisted and must warn, not pass silently."""
    defaults = Path(__file__).resolve().parents[2] / "roles" / "python_env" / "defaults" / "main.yml"
    table = yaml.safe_load(defaults.read_text())["python_env_torch_npu_cann_compatibility"]
    assert table == PUBLISHED
    assert "9.0.0" not in table["2.7.1.post2"]
