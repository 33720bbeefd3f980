"""Simulated torch_npu.contrib.transfer_to_npu (test double): the real one maps cuda->npu
and nccl->hccl; on the CPU test nodes there is nothing to map."""
import sys

print("[simulated torch_npu] transfer_to_npu applied (nothing to map on CPU)", file=sys.stderr, flush=True)
