#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: lerobot_video_check
short_description: Decode a sample of a LeRobot dataset's videos with the system ffmpeg, as GR00T's ffmpeg backend reads them
version_added: "0.2.0"
description:
  - GR00T's C(ffmpeg) video backend asks C(ffprobe) for a video's size and C(ffmpeg) for each frame,
    and returns black frames for a file it cannot read or a frame past the end of the video instead
    of failing, so a bad video trains silently on black frames. This module finds such files first.
  - For every camera of the dataset (each feature of C(dtype) C(video) in C(meta/info.json)), probes
    and decodes whole the videos of a sample of episodes (C(meta/episodes.jsonl)), as raw RGB like the
    backend. A video is refused when it is missing, ffprobe or ffmpeg cannot read it or report an
    error, its frames are not the height and width C(meta/info.json) declares for the camera, or it
    holds fewer frames than its episode has steps.
  - A dataset whose C(meta/info.json) or C(meta/episodes.jsonl) cannot be read has nothing to check
    here (RV(unread) says why); the look at the dataset (M(ascendops.gr00t.path_facts)) reports those.
  - Without C(ffmpeg) or C(ffprobe) on the node's PATH nothing is decoded and RV(missing_tools)
    names them.
  - Reads only; never reports a change.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  dataset:
    description: The LeRobot v2 dataset directory (holding C(meta/) and C(videos/)).
    type: path
    required: true
  episodes:
    description:
      - Episodes per camera whose videos are decoded, spread evenly from the first to the last.
      - C(0) decodes every episode's videos.
    type: int
    default: 3
extends_documentation_fragment:
  - ascendops.gr00t.attributes
"""

EXAMPLES = r"""
- name: Decode three episodes of every camera with ffmpeg
  ascendops.gr00t.lerobot_video_check:
    dataset: /data/gr00t/datasets/libero
  register: videos

- name: Refuse videos GR00T's ffmpeg backend would read as black frames
  ansible.builtin.assert:
    that: videos.problems | length == 0 and videos.missing_tools | length == 0
    fail_msg: "{{ videos.problems + videos.missing_tools }}"
"""

RETURN = r"""
problems:
  description: One message per sampled video that fails, naming the file and what is wrong with it.
  returned: always
  type: list
  elements: str
  sample: ["/data/libero/videos/chunk-000/observation.images.image/episode_000003.mp4: ffprobe cannot read it
            (Invalid data found when processing input)"]
checked:
  description:
    - Every video sampled, with its camera, episode, episode length, height, width and frames decoded
      (null where not read) and its problem (empty when none).
  returned: always
  type: list
  elements: dict
  sample:
    - path: /data/libero/videos/chunk-000/observation.images.image/episode_000000.mp4
      camera: observation.images.image
      episode: 0
      length: 40
      height: 64
      width: 64
      frames: 40
      problem: ""
unread:
  description: Why the dataset's metadata could not be read (nothing was checked then); empty otherwise.
  returned: always
  type: str
missing_tools:
  description: Which of C(ffmpeg) and C(ffprobe) are not on the node's PATH (nothing was decoded then).
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.lerobot_video import check_dataset


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            dataset=dict(type="path", required=True),
            episodes=dict(type="int", default=3),
        ),
        supports_check_mode=True,
    )
    if module.params["episodes"] < 0:
        module.fail_json(msg="episodes is {0}; want 0 (every episode) or more.".format(module.params["episodes"]))
    tools = {name: module.get_bin_path(name) for name in ("ffmpeg", "ffprobe")}
    missing = [name for name, path in tools.items() if not path]
    if missing:
        module.exit_json(changed=False, problems=[], checked=[], unread="", missing_tools=missing)
    result = check_dataset(module.params["dataset"], module.params["episodes"], tools["ffmpeg"], tools["ffprobe"])
    module.exit_json(changed=False, missing_tools=[], **result)


if __name__ == "__main__":
    main()
