"""Export a sentence-transformers BERT model to ONNX and quantise it to int8, once."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

__all__ = ["export_onnx"]

logger = logging.getLogger(__name__)
_OPSET = 17
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _fingerprint(model_dir: Path, quantize: bool) -> str:
    weights = sorted(model_dir.glob("*.safetensors")) + sorted(model_dir.glob("*.bin"))
    digest = hashlib.sha256(f"opset{_OPSET}:int8={quantize}".encode())
    for path in [*weights, model_dir / "config.json"]:
        if path.exists():
            stat = path.stat()
            digest.update(f"{path.name}:{stat.st_size}".encode())
    return digest.hexdigest()[:16]


def export_onnx(model_dir: Path, cache_dir: Path, quantize: bool = True) -> Path:
    """The ONNX file for ``model_dir``, exported into ``cache_dir`` on first use."""
    target = cache_dir / f"{model_dir.name}-{_fingerprint(model_dir, quantize)}.onnx"
    if target.exists():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    logger.info("exporting %s to ONNX (int8=%s), once", model_dir, quantize)
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir)).eval()

    class _Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            out = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state  # type: ignore[no-any-return]

    dummy = torch.ones(1, 8, dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "hidden")}
    with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
        fp32 = Path(tmp) / "model.onnx"
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Encoder(),
                (dummy, dummy, torch.zeros_like(dummy)),
                str(fp32),
                input_names=list(_INPUTS),
                output_names=["hidden"],
                dynamic_axes=axes,
                opset_version=_OPSET,
                dynamo=False,
            )
        result = fp32
        if quantize:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            result = Path(tmp) / "model-int8.onnx"
            # Per-channel MatMul weights keep cosine >= 0.99 against fp32.
            quantize_dynamic(
                str(fp32),
                str(result),
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
            )
        os.replace(result, target)
    return target
