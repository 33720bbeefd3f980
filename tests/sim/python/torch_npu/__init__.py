"""Simulated torch_npu (test double): importable so the launcher shim's import order can be
exercised on CPU-only test nodes. It provides no NPU and says so."""
import sys

__version__ = "2.7.1.post2+simulated"
print("[simulated torch_npu] imported (no NPU: CPU test double)", file=sys.stderr, flush=True)
