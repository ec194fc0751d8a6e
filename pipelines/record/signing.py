"""The desk's own ed25519 key, which signs every exported record, and the checks of a signature (``cryptography``).

The private key is made on first use and kept in the data folder (``desk_signing_key.pem``,
PKCS#8 PEM, mode 0600, never leaves the machine); the public key travels in every signed
export and is shown on the Settings page with its fingerprint, ``SHA256:`` and the
unpadded base64 of the SHA-256 of its 32 raw bytes (the way OpenSSH prints one). What is
signed is ``SIGNING_CONTEXT`` followed by the canonical JSON of the record without its
events and its signature: the run's row and the chain of event digests, which stands for
the events.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from pipelines.core.errors import DebateDeskError

KEY_FILE = "desk_signing_key.pem"
ALGORITHM = "ed25519"
SIGNING_CONTEXT = b"debatedesk.run/signature/v1\n"  # what a signature over a record starts with: it signs nothing else
_LOCK = threading.Lock()
_LOADED: dict[Path, DeskKey] = {}


class SigningKeyError(DebateDeskError):
    """The desk's signing key cannot be made or read; the message says where and how to fix it."""


def fingerprint(public_raw: bytes) -> str:
    """``SHA256:`` and the unpadded base64 of the SHA-256 of the key's 32 raw bytes."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(public_raw).digest()).decode().rstrip("=")


@dataclass(frozen=True)
class DeskKey:
    """This desk's signing key: signs records; its public half and fingerprint go in each one."""

    private: Ed25519PrivateKey
    path: Path

    @property
    def public_raw(self) -> bytes:
        return self.private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    @property
    def public_b64(self) -> str:
        return base64.b64encode(self.public_raw).decode()

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_raw)

    def sign(self, message: bytes) -> str:
        """The base64 ed25519 signature of ``SIGNING_CONTEXT + message``."""
        return base64.b64encode(self.private.sign(SIGNING_CONTEXT + message)).decode()


def desk_key(data_dir: Path) -> DeskKey:
    """The desk's key in ``data_dir``, made there on first use (0600); raises SigningKeyError when it cannot be."""
    path = Path(data_dir) / KEY_FILE
    with _LOCK:
        if path in _LOADED:
            return _LOADED[path]
        key = DeskKey(_read(path) if path.exists() else _create(path), path)
        _LOADED[path] = key
        return key


def existing_desk_key(data_dir: Path) -> DeskKey | None:
    """The desk's key when one was made already (a check of a record never makes one)."""
    path = Path(data_dir) / KEY_FILE
    return desk_key(data_dir) if path.exists() else None


def _create(path: Path) -> Ed25519PrivateKey:
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, pem)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.link(temp, path)  # never replaces a key another process made meanwhile: then that one is the desk's
        finally:
            temp.unlink(missing_ok=True)  # a half-written key (a full disk) is never left behind
    except FileExistsError:
        return _read(path)
    except OSError as exc:
        raise SigningKeyError(
            f"cannot make the desk's signing key in {path.parent}: {exc.strerror or exc}. "
            "Exports are signed with it: make the data folder (DEBATEDESK_DATA_DIR) writable, then export again"
        ) from None
    return private


def _read(path: Path) -> Ed25519PrivateKey:
    try:
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)  # a copy restored with looser rights: only this desk's user reads its private key
        loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError) as exc:
        raise SigningKeyError(
            f"cannot read the desk's signing key {path}: {exc}. Restore it from a backup, or move it away to make a new one"
        ) from None
    if not isinstance(loaded, Ed25519PrivateKey):
        raise SigningKeyError(f"{path} holds a {type(loaded).__name__}, not an ed25519 key; move it away to make a new one")
    return loaded


def verify_signature(public_b64: str, signature_b64: str, message: bytes) -> bool:
    """Whether ``signature_b64`` is the ed25519 signature of ``SIGNING_CONTEXT + message`` by that public key."""
    try:
        public = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_b64, validate=True))
        public.verify(base64.b64decode(signature_b64, validate=True), SIGNING_CONTEXT + message)
    except (InvalidSignature, ValueError):
        return False
    return True


__all__ = ["ALGORITHM", "KEY_FILE", "DeskKey", "SigningKeyError", "desk_key", "existing_desk_key", "fingerprint", "verify_signature"]
