#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: train_status
short_description: Report the GR00T training run of a node from its record, pidfile and log
version_added: "0.1.0"
description:
  - Reads the run record the train role writes at launch, the pidfile the launch script
    writes, the exit file it writes when torchrun returns, and the node's training log.
  - Returns the state (V(running), V(finished), V(stopped), V(failed), V(absent)), the last step, loss,
    grad norm, step time, samples per second after the warm-up, the ETA, a hint for a known
    error found in the log, and the last log lines.
  - With O(config_hash) it also decides what a converge would do about the run (keep it,
    launch, restart, or refuse) without changing anything.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  record:
    description: Run record (JSON) written at launch.
    type: path
    required: true
  pidfile:
    description: Pidfile of the launch script.
    type: path
    required: true
  global_batch_size:
    description:
      - Samples per optimizer step over all ranks, for samples per second.
      - Defaults to the value in the record.
    type: int
  warmup_steps:
    description:
      - Steps left out of the step-time mean.
      - Defaults to the value in the record, else 10.
    type: int
  tail_lines:
    description: Number of last log lines returned.
    type: int
    default: 20
  output_dir:
    description:
      - Output directory of the wanted run, searched for C(checkpoint-*) directories.
      - Defaults to the output directory in the record.
    type: path
  config_hash:
    description: Hash of the wanted run's configuration; enables RV(decision).
    type: str
  run_id:
    description: Id of the wanted run, for messages.
    type: str
    default: ""
  restart:
    description: Whether a live run may be stopped and launched again.
    type: bool
    default: false
  resume:
    description: Whether an output directory with checkpoints may be continued.
    type: bool
    default: false
  primary:
    description:
      - Whether this node runs the world's rank 0, whose checkpoints hold C(trainer_state.json).
      - A resume refuses there when the newest checkpoint lacks it (a save cut off).
    type: bool
    default: true
  wait_until:
    description:
      - Read again, O(poll) seconds apart, for up to O(wait_seconds), until the run is no longer
        running (V(ended)) or, on the master (O(rank) 0), also until its first logged step
        (V(first_step)). V(none) reads once.
      - The wait happens on the node, so a healthy wait prints no retries; RV(progress) says
        where the run is when it returns.
    type: str
    choices: [none, ended, first_step]
    default: none
  wait_seconds:
    description: The longest wait of O(wait_until), in seconds.
    type: int
    default: 0
  poll:
    description: Seconds between reads while waiting.
    type: int
    default: 5
  rank:
    description: The node's rank in the training group (0 for the master), for V(first_step).
    type: int
    default: 0
notes:
  - The module only reads; it never reports a change.
  - Hugging Face's Trainer logs steps on the world's rank 0 only, so other nodes show their
    state and errors but no steps.
extends_documentation_fragment:
  - ascendops.gr00t.attributes
"""

EXAMPLES = r"""
- name: Read the run
  ascendops.gr00t.train_status:
    record: /var/lib/ascendops/train/run.json
    pidfile: /var/lib/ascendops/train/train.pid
  register: run

- name: Show it
  ansible.builtin.debug:
    msg: "{{ run.state }} step {{ run.last_step }} loss {{ run.loss }} {{ run.samples_per_second }} samples/s"

- name: Wait up to a minute for the run to end, reading every 5 seconds
  ascendops.gr00t.train_status:
    record: /var/lib/ascendops/train/run.json
    pidfile: /var/lib/ascendops/train/train.pid
    wait_until: ended
    wait_seconds: 60
    poll: 5
  register: run
"""

RETURN = r"""
state:
  description: V(running), V(finished), V(stopped) (by train_stop, exit code 143), V(failed) or V(absent).
  returned: always
  type: str
  sample: running
pid:
  description: Pid of the launch script; null when none is alive.
  returned: always
  type: int
  sample: 4242
run_id:
  description: Id of the recorded run; null without a record.
  returned: always
  type: str
  sample: libero-panda-8p
log:
  description: Log file of the recorded run.
  returned: always
  type: str
  sample: /data/gr00t/runs/libero-panda-8p/logs/node1.log
exit_code:
  description: Exit code of torchrun; null while running or when unknown.
  returned: always
  type: int
  sample: null
last_step:
  description: Last training step logged (0 before the first).
  returned: always
  type: int
  sample: 123
max_steps:
  description: Steps of the run, from the progress bar.
  returned: always
  type: int
  sample: 20000
loss:
  description: Last logged loss.
  returned: always
  type: float
  sample: 1.28
grad_norm:
  description: Last logged grad norm.
  returned: always
  type: float
  sample: 0.9
step_time:
  description: Seconds per step at the last step.
  returned: always
  type: float
  sample: 7.95
samples_per_second:
  description: Global batch over the mean step time after the warm-up.
  returned: always
  type: float
  sample: 80.5
eta_seconds:
  description: Seconds left at the current pace.
  returned: always
  type: float
  sample: 157000.0
hint:
  description: What to do about the first known error in the log; null when none.
  returned: always
  type: str
  sample: null
errors:
  description: Known errors found in the log (key, line, hint), first appearance first.
  returned: always
  type: list
  elements: dict
last_lines:
  description: The last O(tail_lines) lines of the log.
  returned: always
  type: list
  elements: str
checkpoints:
  description: C(checkpoint-*) directories in the output directory, oldest first.
  returned: always
  type: list
  elements: str
waited:
  description: Whole seconds waited (O(wait_until)).
  returned: always
  type: int
  sample: 27
progress:
  description: The run in a few words (state, step, loss, ETA), for a wait's progress lines.
  returned: always
  type: str
  sample: running, step 20/40, loss 0.8123, ETA 45 s
decision:
  description:
    - What a converge does (action keep, launch, restart or refuse; reason; msg).
    - A launch or restart that resumes names C(resume_from), the newest checkpoint, and
      C(resume_step), the global step of its C(trainer_state.json).
  returned: when O(config_hash) is set
  type: dict
  sample: {"action": "keep", "msg": "run libero-panda-8p is alive; nothing to do"}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.train_log import summarize
from ansible_collections.ascendops.gr00t.plugins.module_utils.train_run import (
    checkpoint_step,
    checkpoints,
    decide,
    pid_alive,
    progress_line,
    read_int,
    read_record,
    read_text,
    run_state,
    wait_for,
    wait_over,
)


def status(params: dict) -> dict:
    record = read_record(params["record"])
    pid = read_int(params["pidfile"])
    alive = pid_alive(pid)
    log = record.get("log", "")
    exit_code = read_int(record["exit_file"]) if record.get("exit_file") else None
    batch = params["global_batch_size"] or int(record.get("global_batch_size", 0))
    warmup = params["warmup_steps"] if params["warmup_steps"] is not None else int(record.get("warmup_steps", 10))
    summary = summarize(read_text(log) if log else "", batch, warmup, record.get("max_steps"), params["tail_lines"])
    summary.pop("series")
    state = run_state(bool(record), alive, None if alive else exit_code, summary.pop("finished"))
    output_dir = params["output_dir"] or record.get("output_dir", "")
    result = dict(summary, state=state, pid=pid if alive else None, run_id=record.get("run_id"), log=log,
                  exit_code=None if alive else exit_code, checkpoints=checkpoints(output_dir) if output_dir else [])
    if params["config_hash"]:
        newest_step = checkpoint_step(output_dir, result["checkpoints"][-1]) if result["checkpoints"] else None
        result["decision"] = decide(state, record, params["config_hash"], params["run_id"], output_dir,
                                    result["checkpoints"], params["restart"], params["resume"], newest_step,
                                    params["primary"])
    return result


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            record=dict(type="path", required=True),
            pidfile=dict(type="path", required=True),
            global_batch_size=dict(type="int"),
            warmup_steps=dict(type="int"),
            tail_lines=dict(type="int", default=20),
            output_dir=dict(type="path"),
            config_hash=dict(type="str", no_log=False),
            run_id=dict(type="str", default=""),
            restart=dict(type="bool", default=False),
            resume=dict(type="bool", default=False),
            primary=dict(type="bool", default=True),
            wait_until=dict(type="str", choices=["none", "ended", "first_step"], default="none"),
            wait_seconds=dict(type="int", default=0),
            poll=dict(type="int", default=5),
            rank=dict(type="int", default=0),
        ),
        supports_check_mode=True,
    )
    params = module.params
    result, waited = wait_for(lambda: status(params),
                              lambda found: wait_over(params["wait_until"], found, params["rank"]),
                              max(0, params["wait_seconds"]), max(1, params["poll"]))
    module.exit_json(changed=False, waited=waited, progress=progress_line(result), **result)


if __name__ == "__main__":
    main()
