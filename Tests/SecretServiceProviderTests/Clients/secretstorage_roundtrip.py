"""Python secretstorage against the Secret Service on DBUS_SESSION_BUS_ADDRESS, with the session
algorithm given as argv[1] ('plain' or 'dh'): store, search, read, change and delete an item.
Prints 'ok' when every step gave what it should; fails with an AssertionError otherwise."""
import sys

import secretstorage
from secretstorage.defines import ALGORITHM_PLAIN, SS_PATH, SS_PREFIX
from secretstorage.dhcrypto import Session
from secretstorage.util import DBusAddressWrapper, open_session

algorithm = sys.argv[1]
connection = secretstorage.dbus_init()
if algorithm == "plain":
    service = DBusAddressWrapper(SS_PATH, SS_PREFIX + "Service", connection)
    session = Session()
    output, path = service.call("OpenSession", "sv", ALGORITHM_PLAIN, ("s", ""))
    session.encrypted = False
    session.object_path = path
else:
    session = open_session(connection)
    assert session.encrypted, "the Diffie-Hellman session was refused"

collection = secretstorage.get_default_collection(connection, session)
assert collection.collection_path.endswith("/aliases/default"), collection.collection_path
secret = ("secret of " + algorithm + " \u00e9\u00e8 " * 40).encode()
attributes = {"app": "python-test", "alg": algorithm}
collection.create_item("Python item", attributes, secret, replace=True)
# The same attributes again with replace: still one item, with the new secret.
collection.create_item("Python item", attributes, secret + b"!", replace=True)
found = list(collection.search_items({"alg": algorithm}))
assert len(found) == 1, found
item = found[0]
assert item.get_secret() == secret + b"!"
assert item.get_attributes() == attributes, item.get_attributes()
assert item.get_label() == "Python item"
assert not item.is_locked()

item.set_label("Renamed")
item.set_attributes({"app": "python-test", "alg": algorithm, "extra": "1"})
item.set_secret(b"changed")
again = list(secretstorage.search_items(connection, {"extra": "1", "alg": algorithm}))
assert len(again) == 1, again
assert again[0].get_label() == "Renamed"
assert again[0].get_secret() == b"changed"
# The old attribute set no longer names it by a pair it lost, and the new pair finds it.
assert list(collection.search_items({"alg": algorithm, "extra": "2"})) == []

item.delete()
assert list(collection.search_items({"alg": algorithm})) == []
print("ok")
