"""Where SWE-bench tasks keep what they make: task folders and gold-gate records
(``$AGENTPOST_SWEBENCH_CACHE``, else ``$XDG_CACHE_HOME/agentpost/swebench``, else
``~/.cache/agentpost/swebench``).

Layer: io.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    root = os.environ.get("AGENTPOST_SWEBENCH_CACHE")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agentpost" / "swebench"
