#!/usr/bin/env python3
"""Times Python secret-storage libraries for keychain-bench: N set+get pairs per run.

Prints one JSON object: {"results": {name: {"pairs_per_second": [..per run..]}}, "skipped": {name: reason}}.
Every file-based keyring writes under a temporary XDG_DATA_HOME; Secret Service items go under a
service name unique to this process and are deleted afterwards.
"""
import json
import os
import sys
import tempfile
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
SERVICE = f"keychain-bench-{os.getpid()}"
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="keychain-bench-py.")


def keyring_secret_service():
    from keyring.backends import SecretService
    backend = SecretService.Keyring()
    return backend.set_password, backend.get_password, lambda a: backend.delete_password(SERVICE, a)


def secretstorage_one_connection():
    import secretstorage
    connection = secretstorage.dbus_init()
    collection = secretstorage.get_default_collection(connection)
    if collection.is_locked():
        raise RuntimeError("the default collection is locked")

    def set_(service, account, secret):
        collection.create_item("keychain-bench", {"service": service, "account": account}, secret.encode(), replace=True)

    def get(service, account):
        items = list(collection.search_items({"service": service, "account": account}))
        return items[0].get_secret().decode() if items else None

    def delete(account):
        for item in collection.search_items({"service": SERVICE, "account": account}):
            item.delete()
    return set_, get, delete


def alt_encrypted():
    from keyrings.alt.file import EncryptedKeyring
    backend = EncryptedKeyring()
    backend.keyring_key = "keychain-bench-password"
    return backend.set_password, backend.get_password, None


PEERS = {
    "python keyring (Secret Service)": keyring_secret_service,
    "python secretstorage (one connection)": secretstorage_one_connection,
    "keyrings.alt EncryptedKeyring": alt_encrypted,
}

results, skipped = {}, {}
for name, make in PEERS.items():
    try:
        set_, get, delete = make()
        set_(SERVICE, "warm-up", "x")
        if get(SERVICE, "warm-up") != "x":
            raise RuntimeError("read back a different value")
    except Exception as error:  # a missing module, no session bus, a locked collection...
        skipped[name] = f"{type(error).__name__}: {error}".splitlines()[0][:200]
        continue
    rates = []
    for run in range(RUNS):
        start = time.perf_counter()
        for i in range(N):
            value = f"secret-{run}-{i}"
            set_(SERVICE, f"account{i}", value)
            if get(SERVICE, f"account{i}") != value:
                raise SystemExit(f"{name}: wrong value read back")
        rates.append(N / (time.perf_counter() - start))
    results[name] = {"pairs_per_second": rates}
    if delete:
        for i in range(N):
            try:
                delete(f"account{i}")
            except Exception:
                pass
        try:
            delete("warm-up")
        except Exception:
            pass

print(json.dumps({"results": results, "skipped": skipped}))
