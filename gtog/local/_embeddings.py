"""all-MiniLM-L6-v2 sentence embeddings on onnxruntime (no torch, no hub downloads).

Mean pooling over the last hidden state with the attention mask, then L2
normalisation, as sentence-transformers does for this model (max 256 tokens).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

from gtog.local._weights import EMBEDDING_DIMS, embedding_files

__all__ = ["MiniLMEmbedder"]

MAX_TOKENS = 256
BATCH = 32


class MiniLMEmbedder:
    """Thread-safe embedder; `embed(texts)` returns an (n, 384) float32 array."""

    dims = EMBEDDING_DIMS

    def __init__(
        self,
        onnx_path: Path | None = None,
        tokenizer_path: Path | None = None,
        threads: int | None = None,
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        if onnx_path is None or tokenizer_path is None:
            files = embedding_files()
            onnx_path, tokenizer_path = files.onnx, files.tokenizer
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or min(2, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = ort.InferenceSession(
            str(onnx_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self.session.get_inputs()}
        self._lock = threading.Lock()

    def count_tokens(self, texts: list[str]) -> int:
        """Tokens the model sees for `texts` (after truncation, without padding)."""
        return sum(sum(e.attention_mask) for e in self.tokenizer.encode_batch(texts))

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length embeddings of `texts`, in order."""
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        with self._lock:
            for start in range(0, len(texts), BATCH):
                batch = texts[start : start + BATCH]
                enc = self.tokenizer.encode_batch([t if t.strip() else " " for t in batch])
                ids = np.array([e.ids for e in enc], dtype=np.int64)
                mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
                feed = {"input_ids": ids, "attention_mask": mask}
                if "token_type_ids" in self._inputs:
                    feed["token_type_ids"] = np.zeros_like(ids)
                hidden = self.session.run(None, feed)[0]
                weights = mask[..., None].astype(np.float32)
                pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
                norms = np.linalg.norm(pooled, axis=1, keepdims=True)
                out[start : start + len(batch)] = pooled / np.clip(norms, 1e-12, None)
        return out
