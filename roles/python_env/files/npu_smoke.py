"""NPU smoke test: torch and torch_npu import, the NPUs are counted, a tensor lands on npu:0.

Prints one JSON line; exits non-zero when an import or the allocation fails.
"""
import json
import os
import sys

import torch
import torch_npu

result = {
    "python": "%d.%d" % sys.version_info[:2],
    "torch": torch.__version__,
    "torch_npu": torch_npu.__version__,
    "device_count": torch.npu.device_count(),
    "device_name": torch.npu.get_device_name(0),
    "ascend_home_path": os.environ.get("ASCEND_HOME_PATH", ""),
    "ld_library_path": os.environ.get("LD_LIBRARY_PATH", "").split(":"),
}
tensor = torch.ones(4).to("npu:0")
result["tensor_device"] = str(tensor.device)
result["tensor_sum"] = tensor.sum().item()
print(json.dumps(result))
