"""Tests of URL credential masking and splitting."""
from __future__ import annotations

from ansible_collections.ascendops.gr00t.plugins.filter.pip import pip_options
from ansible_collections.ascendops.gr00t.plugins.filter.redact import FilterModule, url_credentials
from ansible_collections.ascendops.gr00t.plugins.module_utils.redact import mask_credentials, url_passwords


def test_a_url_password_is_masked_and_the_rest_kept() -> None:
    assert mask_credentials("https://ci:s3cret@pypi.example.com/simple") == "https://ci:********@pypi.example.com/simple"
    assert mask_credentials("see http://:tok@mirror:8080/x and ftp://u:p@h/") == \
        "see http://:********@mirror:8080/x and ftp://u:********@h/"


def test_urls_without_a_password_are_left_alone() -> None:
    for text in ("https://pypi.example.com/simple", "https://user@host/x", "/srv/artifacts", "a:b@c", "",
                 "http://host/path@tag"):
        assert mask_credentials(text) == text


def test_lists_and_dicts_are_masked_deeply() -> None:
    args = pip_options("https://ci:s3cret@idx/simple", ["https://x:y@extra/simple"])
    masked = mask_credentials(args)
    assert "s3cret" not in " ".join(masked) and "y@" not in " ".join(masked)
    masked_dict = mask_credentials({"proxy": ["http://u:p@proxy:3128"], "n": 3})
    assert masked_dict == {"proxy": ["http://u:********@proxy:3128"], "n": 3}


def test_passwords_are_found_as_written_and_decoded() -> None:
    assert url_passwords(["--index-url", "https://ci:p%40ss@idx/simple", "--no-index"]) == {"p%40ss", "p@ss"}
    assert url_passwords("http://proxy:3128") == set()


def test_a_url_is_split_into_url_user_and_password() -> None:
    assert url_credentials("https://ci:p%40ss@mirror.example.com/ascend") == {
        "url": "https://mirror.example.com/ascend", "username": "ci", "password": "p@ss"}
    assert url_credentials("https://mirror.example.com/ascend") == {
        "url": "https://mirror.example.com/ascend", "username": "", "password": ""}
    assert url_credentials("/srv/artifacts")["url"] == "/srv/artifacts"
    assert url_credentials(None)["url"] == ""


def test_the_filters_are_registered() -> None:
    assert {"mask_credentials", "url_credentials"} <= set(FilterModule().filters())
