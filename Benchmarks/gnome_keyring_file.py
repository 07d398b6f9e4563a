"""Writes a gnome-keyring keyring file (its binary, encrypted format, version 0) holding N items,
for keychain-bench: filling gnome-keyring through its API rewrites the whole file at every store,
so 10,000 items would take the better part of an hour; gnome-keyring-daemon then opens this file
with --unlock and the same password, as it opens a keyring it wrote itself.

Usage: gnome_keyring_file.py PATH PASSWORD N
Item n: label "keychain-bench n", secret "secret-n", attributes
{"xdg:schema": "org.keychain.Bench", "service": "keychain-bench", "account": "user-n"}.
Needs the `cryptography` package (a dependency of secretstorage).
"""
import hashlib
import os
import struct
import sys
import time

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

MAGIC = b"GnomeKeyring\n\r\0\n"
ITERATIONS = 1973


def u32(value):
    return struct.pack(">I", value)


def text(value):
    if value is None:
        return u32(0xFFFFFFFF)
    data = value.encode() if isinstance(value, str) else value
    return u32(len(data)) + data


def stamp(seconds):
    return u32(seconds >> 32) + u32(seconds & 0xFFFFFFFF)


def attributes(n):
    return {"xdg:schema": "org.keychain.Bench", "service": "keychain-bench", "account": "user-%d" % n}


def write(path, password, count):
    now = int(time.time())
    salt = os.urandom(8)
    public, sealed = [], []
    for n in range(count):
        pairs = sorted(attributes(n).items())
        # Outside the encryption: the id, the type, and each attribute with its value hashed (MD5, hex).
        public.append(u32(n + 1) + u32(0) + u32(len(pairs)) + b"".join(
            text(name) + u32(0) + text(hashlib.md5(value.encode()).hexdigest()) for name, value in pairs))
        # Inside: label, secret, dates, reserved fields, the attributes in clear, an empty ACL.
        sealed.append(
            text("keychain-bench %d" % n) + text("secret-%d" % n) + stamp(now) + stamp(now) + text(None) + u32(0) * 4
            + u32(len(pairs)) + b"".join(text(name) + u32(0) + text(value) for name, value in pairs) + u32(0))
    body = b"".join(sealed)
    body += b"\0" * ((-(16 + len(body))) % 16)
    plain = hashlib.md5(body).digest() + body
    digest = hashlib.sha256(password.encode() + salt).digest()
    for _ in range(ITERATIONS - 1):
        digest = hashlib.sha256(digest).digest()
    encryptor = Cipher(algorithms.AES(digest[:16]), modes.CBC(digest[16:32])).encryptor()
    encrypted = encryptor.update(plain) + encryptor.finalize()
    header = MAGIC + bytes([0, 0, 0, 0]) + text("Login") + stamp(now) + stamp(now) + u32(0) + u32(0) + u32(ITERATIONS) + salt + u32(0) * 4
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "wb") as out:
        out.write(header + u32(count) + b"".join(public) + u32(len(encrypted)) + encrypted)
    os.chmod(path, 0o600)


if __name__ == "__main__":
    write(sys.argv[1], sys.argv[2], int(sys.argv[3]))
