# Entry points: `make demo` (simulated two-node cluster, full site.yml) and `make test`
# (lint, unit tests, molecule scenarios). Both set up what is missing: the controller
# venv, a container engine, the base node image and the simulated vendor artifacts.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
SIMCTL := $(PYTHON) tests/harness/simctl.py
ARTIFACTS := $(CURDIR)/.sim/artifacts
SCENARIOS ?= default preflight_failures cann_faults python_env_faults mx_driving gr00t train network
# `make molecule` runs the scenarios in two lanes side by side (tests/harness/molecule_lanes.py):
# on 2 cores 36 minutes against 42.5 one after the other. cann_faults and preflight_failures
# both write the broken copies of the artifact source: keep them in one lane. SCENARIOS=... on
# the command line runs just those, one after the other.
ifeq ($(origin SCENARIOS),file)
MOLECULE_LANES ?= "train network mx_driving" "default cann_faults python_env_faults gr00t preflight_failures"
else
MOLECULE_LANES ?= "$(SCENARIOS)"
endif
export PATH := $(BIN):$(PATH)
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export PY_COLORS := 1
export ANSIBLE_FORCE_COLOR := 1
# NVIDIA's GR00T release tarball the training tests use; empty: ../shared/upstream/.
export GR00T_UPSTREAM_TARBALL ?=
# The training wheels and env, kept across clones (tests/harness/simctl.py).
export SIM_CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ascendops-sim

.PHONY: help venv lint unit resolve sim installed secrets molecule faults test demo demo-down clean distclean

help:
	@echo "make demo       provision the simulated two-node 910B cluster with site.yml and train GR00T on it"
	@echo "make test       lint + unit tests + target resolution + installed collection + secrets + molecule scenarios ($(SCENARIOS)) + faults"
	@echo "make lint       yamllint --strict, ansible-lint --profile production, changelog fragments, ansible-test sanity"
	@echo "make unit       pytest tests/unit"
	@echo "make resolve    every pip set the roles install resolves from PyPI for linux aarch64 and x86_64, CPython 3.10 (needs PyPI)"
	@echo "make installed  build and install the collection tarball, use it from a project outside the repo"
	@echo "make secrets    index and proxy URLs with passwords: the passwords show nowhere"
	@echo "make molecule   molecule test of every scenario, in two lanes side by side (SCENARIOS=... runs those in turn)"
	@echo "make faults     fault-injection suite: site.yml on five nodes under faults, then reruns"
	@echo "make demo-down  remove the demo containers"
	@echo "make clean      remove demo/molecule containers and generated artifacts"
	@echo "make distclean  clean, plus the venv, the base images and the training wheels and env ($(SIM_CACHE_DIR))"

# The venv is rebuilt when the requirements change.
$(VENV)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

venv: $(VENV)/.installed

lint: venv
	yamllint --strict .
	ansible-lint --profile production
	antsibull-changelog lint
	tests/sanity/run.sh

unit: venv
	$(SIMCTL) host-tools
	pytest -q tests/unit

# The pip sets as the roles render them (GR00T's from the release tarball), resolved by uv for each
# target platform (pip's --platform does not evaluate markers for it). -rx lists the expected
# failures, vendor gaps each named with its reason. uv's downloads are kept in $(SIM_CACHE_DIR)/uv;
# an unreachable PyPI fails it.
resolve: venv
	pytest -q -rx tests/target

# Container engine, base image and simulated artifacts: each step reuses what exists.
sim: venv
	$(SIMCTL) engine
	$(SIMCTL) image
	$(SIMCTL) artifacts $(ARTIFACTS) --extra-cann-version 8.5.0 --extra-driver-version 25.3.rc1
	$(SIMCTL) train-data $(CURDIR)/.sim/wheels-train >/dev/null

# The collection as users get it: built, accepted by Galaxy's importer, installed from the
# tarball, used by FQCN.
installed: sim
	pytest -q tests/installed

# Credentials in the pip index and proxy URLs: not in the output, the logs or the node's files.
secrets: sim
	pytest -q tests/secrets

# Each scenario's output is kept in .sim/logs; a failed one ends with its last failed task, so
# the end of the output says which check failed and why.
molecule: sim
	SIM_IMAGE="$$($(SIMCTL) tag)" python tests/harness/molecule_lanes.py $(MOLECULE_LANES)

# Needs nsenter and iptables on the host (util-linux, and iptables that docker.io brings).
faults: sim
	pytest -q tests/faults

test: lint unit resolve installed secrets molecule faults

# Every stage, then a short real GR00T run (2 ranks per node): its status and report once it ends.
demo: sim
	$(SIMCTL) demo-wheels $(CURDIR)/.sim/wheels-train --artifacts $(ARTIFACTS) >/dev/null
	$(SIMCTL) up tests/sim/clusters/demo.json --artifacts $(ARTIFACTS)
	ansible-playbook site.yml -i inventories/sim
	ansible-playbook playbooks/train_status.yml -i inventories/sim -e train_status_wait=900

demo-down:
	$(SIMCTL) down tests/sim/clusters/demo.json

clean: demo-down
	-for s in $(SCENARIOS); do $(BIN)/molecule destroy -s $$s; done
	-if [ -f .sim/faults/cluster.json ]; then $(SIMCTL) down .sim/faults/cluster.json; fi
	rm -rf .sim/artifacts* reports

distclean: clean
	-docker image ls -q ascendops-sim-node | xargs -r docker image rm -f
	-docker image ls -q ascendops-bench-snapshot | xargs -r docker image rm -f
	rm -rf $(VENV) .sim "$(SIM_CACHE_DIR)"
