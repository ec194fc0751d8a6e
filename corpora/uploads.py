"""Files a checker uploads, checked before they are read: a name that can be stored, content that matches its extension.

The page hands the uploads over as (name, bytes); ``stage_uploads`` refuses what cannot be kept
with a message naming the file (a control character in its name, a name too long for a file
system, content that is not what its extension says) and gives two different files of the same
name both a place, the second as "name (2).ext", saying so.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from pathlib import Path, PurePosixPath, PureWindowsPath

MAX_NAME_BYTES = 200  # under every file system's 255, with room for a " (2)" suffix
CONTENT_SNIFF_BYTES = 64 * 1024
# What a binary file starts with, for the formats people most often rename by mistake.
_BINARY_MAGIC = {
    b"%PDF-": "a PDF",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"PK\x03\x04": "a ZIP archive (or a Word/Excel file)",
    b"\x1f\x8b": "a gzip archive",
    b"\x7fELF": "a program",
    b"MZ": "a Windows program",
    b"\xd0\xcf\x11\xe0": "an old Office document",
}
_TEXT_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


class CorpusFileError(ValueError):
    """A file that cannot be read into a corpus; the message names the file and the fix."""


def shown_name(name: str) -> str:
    """A file name as a message may show it: control characters as \\xNN, cut to 80 characters."""
    safe = "".join(f"\\x{ord(ch):02x}" if unicodedata.category(ch) in ("Cc", "Cf") else ch for ch in name)
    return safe if len(safe) <= 80 else safe[:60] + "…" + safe[-15:]


def check_name(name: str) -> str:
    """The file's own name (no folders), refused with a plain message when it cannot be stored or shown."""
    base = PureWindowsPath(PurePosixPath(name).name).name  # a browser may send "C:\\...\\x.txt" or "a/b/x.txt"
    if not base.strip() or base in (".", ".."):
        raise CorpusFileError(f"{shown_name(name)!r}: a file needs a name; rename it and upload it again")
    bad = next((ch for ch in base if unicodedata.category(ch) == "Cc"), None)
    if bad is not None:
        raise CorpusFileError(
            f"{shown_name(base)}: the file name holds a control character (U+{ord(bad):04X}); rename the file and upload it again"
        )
    size = len(base.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        raise CorpusFileError(
            f"{shown_name(base)}: the file name is {len(base)} characters ({size} bytes); the limit is {MAX_NAME_BYTES} bytes. "
            "Rename it shorter and upload it again"
        )
    return base


def check_content(name: str, suffix: str, head: bytes) -> None:
    """Refuse content that is not what the extension says (a PDF renamed .html, an image renamed .txt, a .pdf that is not one)."""
    if suffix == ".pdf":
        if b"%PDF-" not in head[:1024]:
            raise CorpusFileError(f"{shown_name(name)}: not a PDF (it does not begin as a PDF does); upload the PDF itself")
        return
    for magic, what in _BINARY_MAGIC.items():
        if head.startswith(magic):
            raise CorpusFileError(f"{shown_name(name)}: the file is {what}, not {suffix} text; upload it with its own extension")
    if b"\x00" in head and not head.startswith(_TEXT_BOMS):
        raise CorpusFileError(f"{shown_name(name)}: binary content (NUL bytes), not {suffix} text; upload a text file")


def stage_uploads(uploads: Sequence[tuple[str, bytes]], folder: Path) -> tuple[list[Path], dict[Path, str], list[str]]:
    """Write the uploads into ``folder`` for the loader: (paths, shown names, notes for the person).

    Every name and content is checked first, so a refused file leaves nothing written. Two uploads
    with the same name and the same bytes are one file; with different bytes both are kept, the
    later ones as "name (2).ext", "name (3).ext" (a note says so).
    """
    checked: list[tuple[str, bytes]] = []
    for name, data in uploads:
        base = check_name(name)
        check_content(base, Path(base).suffix.lower(), data[:CONTENT_SNIFF_BYTES])
        checked.append((base, data))
    paths: list[Path] = []
    shown: dict[Path, str] = {}
    notes: list[str] = []
    kept: dict[str, bytes] = {}  # the name each kept file has now, case-folded, and its bytes
    for base, data in checked:
        stem, suffix = Path(base).stem, Path(base).suffix
        final, n = base, 1
        while final.casefold() in kept and kept[final.casefold()] != data:
            n += 1
            final = f"{stem} ({n}){suffix}"
        if final.casefold() in kept:
            if final == base:
                notes.append(f"{shown_name(base)} was uploaded twice with the same content; it is read once")
            continue
        if final != base:
            notes.append(f"two different files are named {shown_name(base)}; the later one is kept as {shown_name(final)}")
        kept[final.casefold()] = data
        path = folder / f"{len(paths):03d}" / final  # a folder each: the document keeps its name, nothing collides on disk
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        paths.append(path)
        shown[path] = final
    return paths, shown, notes
