"""Stores items one by one into the default collection until the Secret Service stops answering,
printing 'stored NAME' after each CreateItem the service acknowledged (NAME: the optional prefix
given after 'store', then 0, 1, 2...). With 'check NAME...' instead, reads each named item back
and prints 'ok', or what is missing."""
import sys

import secretstorage

connection = secretstorage.dbus_init()
collection = secretstorage.get_default_collection(connection)
if sys.argv[1] == "check":
    missing = []
    for name in sys.argv[2:]:
        found = list(collection.search_items({"loop": name}))
        if len(found) != 1 or found[0].get_secret() != ("value %s" % name).encode():
            missing.append(name)
    print("ok" if not missing else "missing " + " ".join(missing))
else:
    prefix = sys.argv[2] if len(sys.argv) > 2 else ""
    n = 0
    while True:
        name = "%s%d" % (prefix, n)
        collection.create_item("loop %s" % name, {"loop": name}, ("value %s" % name).encode())
        print("stored %s" % name, flush=True)
        n += 1
