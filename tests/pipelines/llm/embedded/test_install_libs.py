"""llama.cpp's libraries copied without touching one a running server has loaded (install_libs.sh)."""

import os
import subprocess
from pathlib import Path

from pipelines.run.llm.embedded import server

INSTALL = Path(server.__file__).with_name("install_libs.sh")
ROOT = Path(__file__).parents[4]


def install(src: Path, dst: Path) -> None:
    subprocess.run(["bash", str(INSTALL), str(src), str(dst)], check=True, capture_output=True, text=True)


def built(folder: Path, version: str, body: bytes) -> Path:
    """A library as cmake leaves it: the versioned file and its two links."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"libllama.so.{version}").write_bytes(body)
    for link, target in (("libllama.so.0", f"libllama.so.{version}"), ("libllama.so", "libllama.so.0")):
        (folder / link).unlink(missing_ok=True)
        (folder / link).symlink_to(target)
    return folder


def test_a_changed_library_is_renamed_over_so_a_process_that_loaded_the_old_one_keeps_it(tmp_path: Path) -> None:
    dst = tmp_path / "lib"
    install(built(tmp_path / "a", "0.5.0", b"old library"), dst)
    loaded = (dst / "libllama.so.0.5.0").open("rb")  # a running server holds it
    try:
        install(built(tmp_path / "b", "0.5.0", b"new library"), dst)
        assert loaded.read() == b"old library"  # written in place, the open file would read the new bytes (a mapped one: a crash)
    finally:
        loaded.close()
    assert (dst / "libllama.so").read_bytes() == b"new library"
    assert not list(dst.glob(".*.new"))


def test_the_same_bytes_are_left_alone_mtime_too_so_make_rebuilds_nothing(tmp_path: Path) -> None:
    src = built(tmp_path / "a", "0.5.0", b"library")
    dst = tmp_path / "lib"
    install(src, dst)
    os.utime(dst / "libllama.so.0.5.0", (1_000_000, 1_000_000))
    before = (dst / "libllama.so.0.5.0").stat()
    install(src, dst)
    after = (dst / "libllama.so.0.5.0").stat()
    assert (after.st_ino, after.st_mtime) == (before.st_ino, before.st_mtime)


def test_links_stay_links_and_follow_a_new_version(tmp_path: Path) -> None:
    dst = tmp_path / "lib"
    install(built(tmp_path / "a", "0.5.0", b"old"), dst)
    install(built(tmp_path / "b", "0.6.0", b"new"), dst)
    assert (dst / "libllama.so").is_symlink() and os.readlink(dst / "libllama.so") == "libllama.so.0"
    assert os.readlink(dst / "libllama.so.0") == "libllama.so.0.6.0"
    assert (dst / "libllama.so").read_bytes() == b"new"


def test_the_build_and_the_makefile_copy_the_libraries_through_it() -> None:
    build = INSTALL.with_name("build_llama_server.sh").read_text()
    makefile = (ROOT / "Makefile").read_text()
    assert "install_libs.sh" in build and "install_libs.sh" in makefile
    assert "cp -P -f" not in build and "cp -P -f" not in makefile  # the in-place copy that killed a running server
