"""A notebook cell's outputs as the text the notebook tools answer with (``read_notebook``,
``run_cell``): what the model reads of a cell's streams, errors, results and images."""

from __future__ import annotations

import re
from typing import Any

import mcp.types as mt

__all__ = ["MAX_CELL_OUTPUT_CHARS", "MAX_IMAGES", "MAX_IMAGE_CHARS", "outputs_text", "text_of"]

MAX_IMAGES = 4
"""read_notebook / run_cell attach at most this many images per answer."""
MAX_IMAGE_CHARS = 1_000_000
"""An image bigger than this (base64 characters, about 750 kB of PNG) is left out."""
MAX_CELL_OUTPUT_CHARS = 3_000
"""Each output (stream text, result, traceback) is cut to this many characters: head and tail."""

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def text_of(value: Any) -> str:
    """An nbformat multiline string (a str or a list of str) as one str; None is \"\"."""
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return "" if value is None else str(value)


def _strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _cut(text: str, position: int, what: str) -> str:
    """`text` cut to :data:`MAX_CELL_OUTPUT_CHARS` (its head and tail), saying where and how much."""
    if len(text) <= MAX_CELL_OUTPUT_CHARS:
        return text
    half = MAX_CELL_OUTPUT_CHARS // 2
    return (
        f"{text[:half]}\n[{what} of cell {position} cut: {len(text) - 2 * half} of {len(text)} characters "
        f"left out here]\n{text[-half:]}"
    )


def outputs_text(outputs: list[Any], position: int, images: list[mt.ImageContent]) -> str:
    """A code cell's nbformat `outputs` as text for the model: streams, errors (ANSI codes
    removed), results and displays, each cut to :data:`MAX_CELL_OUTPUT_CHARS`; PNG/JPEG images are
    appended to `images` (at most :data:`MAX_IMAGES`) and named in the text."""
    pieces: list[str] = []
    for out in outputs:
        if not isinstance(out, dict):
            continue
        kind = out.get("output_type")
        if kind == "stream":
            text = _strip_ansi(text_of(out.get("text"))).rstrip("\n")
            pieces.append(f"{out.get('name', 'stdout')}: " + _cut(text, position, "stream output"))
        elif kind == "error":  # kept whole but for a long traceback: the error is what matters
            tb = _cut(_strip_ansi("\n".join(text_of(x) for x in out.get("traceback") or [])), position, "traceback")
            pieces.append(f"error: {out.get('ename')}: {_strip_ansi(text_of(out.get('evalue')))}\n{tb}".rstrip())
        elif kind in ("execute_result", "display_data"):
            raw = out.get("data")
            data: dict[str, Any] = raw if isinstance(raw, dict) else {}
            label = "result" if kind == "execute_result" else "display"
            image_kinds = [m for m in ("image/png", "image/jpeg") if m in data]
            if image_kinds:
                pieces.append(_attach(images, image_kinds[0], text_of(data[image_kinds[0]]), position))
            elif "text/plain" in data:
                pieces.append(f"{label}: " + _cut(_strip_ansi(text_of(data["text/plain"])), position, label))
            else:
                pieces.append(f"{label}: [{', '.join(sorted(data)) or 'empty'}]")
    return "\n".join(pieces)


def _attach(images: list[mt.ImageContent], mime: str, data: str, position: int) -> str:
    data = data.replace("\n", "")
    if len(images) >= MAX_IMAGES:
        return f"[{mime} of cell {position} not attached: at most {MAX_IMAGES} images per answer]"
    if len(data) > MAX_IMAGE_CHARS:
        return f"[{mime} of cell {position} not attached: {len(data)} characters, over the cap]"
    images.append(mt.ImageContent(data=data, mime_type=mime))
    return f"[{mime} attached as image {len(images)}]"
