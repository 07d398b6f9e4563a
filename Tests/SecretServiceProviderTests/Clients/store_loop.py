"""Stores items one by one into the default collection until the Secret Service stops answering,
printing 'stored N' after each CreateItem the service acknowledged. With 'check N...' instead,
reads each named item back and prints 'ok', or what is missing."""
import sys

import secretstorage

connection = secretstorage.dbus_init()
collection = secretstorage.get_default_collection(connection)
if sys.argv[1] == "check":
    missing = []
    for n in sys.argv[2:]:
        found = list(collection.search_items({"loop": n}))
        if len(found) != 1 or found[0].get_secret() != ("value %s" % n).encode():
            missing.append(n)
    print("ok" if not missing else "missing " + " ".join(missing))
else:
    n = 0
    while True:
        collection.create_item("loop %d" % n, {"loop": str(n)}, ("value %d" % n).encode())
        print("stored %d" % n, flush=True)
        n += 1
