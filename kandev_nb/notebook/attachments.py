"""`--attach`: files and images sent with a prompt, the way the seed does it.

stream-json prompts carry text; the seed saves images to ``.kandev/temp/images/`` in the
workspace and prepends file references so that Claude Code reads them with its `Read`
tool (which understands PNG, JPEG, GIF and WebP). We do the same for files and for image
values from the notebook: a matplotlib figure, a PIL image, or PNG/JPEG bytes.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

from kandev_nb.errors import AttachmentError

__all__ = ["AttachmentError", "attach", "prompt_with_attachments"]

IMAGE_DIR = Path(".kandev") / "temp" / "images"
_MAGIC = {b"\x89PNG": ".png", b"\xff\xd8\xff": ".jpg", b"GIF8": ".gif", b"RIFF": ".webp"}


def _image_bytes(value: Any) -> tuple[bytes, str] | None:
    if isinstance(value, bytes | bytearray):
        for magic, suffix in _MAGIC.items():
            if bytes(value[: len(magic)]) == magic:
                return bytes(value), suffix
        return None
    if hasattr(value, "savefig"):  # a matplotlib Figure
        buf = io.BytesIO()
        value.savefig(buf, format="png", bbox_inches="tight")
        return buf.getvalue(), ".png"
    if hasattr(value, "save") and hasattr(value, "mode") and hasattr(value, "size"):  # a PIL Image
        buf = io.BytesIO()
        value.save(buf, format="PNG")
        return buf.getvalue(), ".png"
    return None


def attach(item: str, namespace: dict[str, Any], cwd: str | Path) -> Path:
    """Resolve one --attach item to a file the CLI can Read.

    Args:
        item: a file path (relative to `cwd`), or the name of a notebook variable holding a
            matplotlib figure, a PIL image, or PNG/JPEG/GIF/WebP bytes.
        namespace: the notebook's user namespace.
        cwd: the CLI's working directory; images are saved under ``.kandev/temp/images/``.

    Returns:
        The absolute path of the file to reference in the prompt.

    Raises:
        AttachmentError: not a file, not a variable, or a variable of another type.
    """
    if item in namespace:
        found = _image_bytes(namespace[item])
        if found is None:
            raise AttachmentError(
                f"--attach {item}: the variable is a {type(namespace[item]).__name__}; expected a matplotlib "
                "figure, a PIL image or image bytes (or give a file path)"
            )
        data, suffix = found
        folder = Path(cwd) / IMAGE_DIR
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{item}-{hashlib.sha256(data).hexdigest()[:12]}{suffix}"
        path.write_bytes(data)
        return path.resolve()
    path = Path(item).expanduser()
    if not path.is_absolute():
        path = Path(cwd) / path
    if path.is_file():
        return path.resolve()
    raise AttachmentError(f"--attach {item}: no such file and no notebook variable of that name")


def prompt_with_attachments(prompt: str, paths: list[Path]) -> str:
    """Prepend references to attached files so that the agent reads them first."""
    if not paths:
        return prompt
    lines = "\n".join(f"- {p}" for p in paths)
    return f"Attached files (read them with the Read tool):\n{lines}\n\n{prompt}"
