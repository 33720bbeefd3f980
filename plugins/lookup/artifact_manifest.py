# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
name: artifact_manifest
short_description: Read the sha256 manifest of an artifact source, parsed
version_added: "0.2.0"
description:
  - Reads the manifest (C(sha256sum) output) of an artifact source on the controller, from a
    directory or over http(s), and returns it as a mapping of file name to sha256.
  - The stages that stage artifacts, the preflight report and the wheelhouse all read the
    manifest through this one lookup.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  _terms:
    description:
      - The artifact source, an absolute directory on the controller or an http(s) URL.
      - A user and password in the URL are sent as basic authentication and never shown in errors.
    required: true
    type: list
    elements: str
  manifest:
    description: The manifest's file name in the source.
    type: str
    default: SHA256SUMS
  validate_certs:
    description: Verify the server's TLS certificate for an https source.
    type: bool
    default: true
  missing_ok:
    description:
      - Return an empty mapping when a directory source has no manifest file, instead of failing
        (for a caller that reports the missing manifest itself).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Fail early when the wheel is not listed
  ansible.builtin.assert:
    that:
      - "'mx_driving-26.2.0.whl' in lookup('ascendops.gr00t.artifact_manifest', '/srv/ascend')"

- name: The manifest of a mirror
  ansible.builtin.debug:
    msg: "{{ lookup('ascendops.gr00t.artifact_manifest', 'https://mirror.example/ascend', manifest='SHA256SUMS') }}"
"""

RETURN = r"""
_raw:
  description: One mapping per source, file name (as listed, e.g. C(wheels/x.whl)) to lower-case sha256.
  type: list
  elements: dict
"""

import os

from ansible.errors import AnsibleLookupError
from ansible.module_utils.common.text.converters import to_text
from ansible.module_utils.urls import open_url
from ansible.plugins.lookup import LookupBase
from ansible_collections.ascendops.gr00t.plugins.module_utils.bundle import parse_sha256sums
from ansible_collections.ascendops.gr00t.plugins.module_utils.redact import MASK, mask_credentials, url_passwords


def is_url(source: str) -> bool:
    """Whether the source is read over http(s) rather than from a controller directory."""
    return source.startswith(("http://", "https://"))


def manifest_location(source: str, manifest: str) -> str:
    """The manifest's path or URL in the source."""
    return source.rstrip("/") + "/" + manifest


def scrubbed(text: str, source: str) -> str:
    """The text without the source's password, in a URL or on its own (as urllib may quote it)."""
    text = mask_credentials(text)
    for password in url_passwords(source):
        text = text.replace(password, MASK)
    return text


def read_manifest(source: str, manifest: str, validate_certs: bool = True, missing_ok: bool = False) -> dict[str, str]:
    """The parsed manifest of one source; a missing directory manifest is {} when missing_ok."""
    location = manifest_location(source, manifest)
    try:
        if is_url(source):
            text = to_text(open_url(location, validate_certs=validate_certs).read())
        elif missing_ok and not os.path.exists(location):
            return {}
        else:
            with open(location, encoding="utf-8") as handle:
                text = handle.read()
    except Exception as exc:  # urllib and OSError raise many kinds; each becomes one message
        raise AnsibleLookupError(scrubbed(f"cannot read {location}: {exc}", source)) from None
    try:
        return parse_sha256sums(text)
    except ValueError as exc:
        raise AnsibleLookupError(scrubbed(f"{location}: {exc}", source)) from None


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        return [read_manifest(str(source), self.get_option("manifest"), self.get_option("validate_certs"),
                              self.get_option("missing_ok")) for source in terms]
