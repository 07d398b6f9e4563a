"""CreateCollection and Collection.Delete through secretstorage. With 'create': makes a
collection labelled 'Work Secrets' and stores an item in it; 'check': finds it again (after a
restart) and deletes the collection; 'gone': the collection and its item are no more.
Prints 'ok' when each step gave what it should."""
import sys

import secretstorage

connection = secretstorage.dbus_init()
step = sys.argv[1]
if step == "create":
    work = secretstorage.create_collection(connection, "Work Secrets")
    assert work.collection_path.endswith("/collection/worksecrets"), work.collection_path
    assert work.get_label() == "Work Secrets"
    work.create_item("vpn", {"app": "vpn"}, b"work-secret")
    second = secretstorage.create_collection(connection, "Work Secrets")
    assert second.collection_path.endswith("/collection/worksecrets_2"), second.collection_path
    assert [c.collection_path for c in secretstorage.get_all_collections(connection)][-2:] == [work.collection_path, second.collection_path]
    # Not in the default collection: each collection is a scope of its own.
    assert list(secretstorage.get_default_collection(connection).search_items({"app": "vpn"})) == []
elif step == "check":
    work = secretstorage.Collection(connection, "/org/freedesktop/secrets/collection/worksecrets")
    assert work.get_label() == "Work Secrets", work.get_label()
    found = list(work.search_items({"app": "vpn"}))
    assert len(found) == 1 and found[0].get_secret() == b"work-secret"
    work.delete()
else:
    paths = [c.collection_path for c in secretstorage.get_all_collections(connection)]
    assert not any(p.endswith("/worksecrets") for p in paths), paths
    assert list(secretstorage.search_items(connection, {"app": "vpn"})) == []
print("ok")
