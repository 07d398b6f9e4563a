"""What a Secret Service provider holds, through a client of its own (secretstorage), for the
switching matrix to compare with itself before and after a round trip.

  fill LABEL      stores the items of the JSON list on standard input ({label, attributes,
                  secret (hex), content_type}) into the collection labelled LABEL, none replacing
  dump [--dates] [NAME...]  prints every unlocked collection's items as sorted JSON lines, the
                  default alias's collection named "(default)", the attributes NAMEd left out,
                  with each item's Created and Modified after --dates
  lock LABEL      locks the collection labelled LABEL through the Secret Service API
  unlock LABEL    unlocks it so (KWallet opens a wallet of an empty password without asking)
  open-keepassxc FILE  opens KeePassXC's database FILE with the password on standard input,
                  through KeePassXC's own interface (the Secret Service's Unlock asks in its window)
"""
import json
import sys
import time

import secretstorage
from jeepney import DBusAddress, new_method_call
from secretstorage.dhcrypto import Session
from secretstorage.util import exec_prompt

connection = secretstorage.dbus_init()
SERVICE = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets", interface="org.freedesktop.Secret.Service")

# A plain session (the test's bus is private): kwalletd fails a dh-ietf1024 session now and then
# (it refuses a public key under 128 bytes and drops the shared secret's leading zeros), which is
# the command's to cope with, not this checker's.
session = Session()
session.object_path = connection.send_and_get_reply(new_method_call(SERVICE, "OpenSession", "sv", ("plain", ("s", "")))).body[1]
session.encrypted = False


def all_collections():
    properties = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets", interface="org.freedesktop.DBus.Properties")
    paths = connection.send_and_get_reply(new_method_call(properties, "Get", "ss", ("org.freedesktop.Secret.Service", "Collections"))).body[0][1]
    return [secretstorage.Collection(connection, path, session) for path in paths]


def collection_labelled(label):
    for collection in all_collections():
        if collection.get_label() == label:
            return collection
    sys.exit("no collection labelled %r" % label)


def fill(label):
    collection = collection_labelled(label)
    for item in json.load(sys.stdin):
        collection.create_item(item["label"], item["attributes"], bytes.fromhex(item["secret"]), replace=False, content_type=item["content_type"])


def dump(ignored, dates):
    default = connection.send_and_get_reply(new_method_call(SERVICE, "ReadAlias", "s", ("default",))).body[0]
    rows = []
    for collection in all_collections():
        if collection.is_locked():
            continue
        name = "(default)" if collection.collection_path == default else collection.get_label()
        for item in collection.get_all_items():
            attributes = {k: v for k, v in item.get_attributes().items() if k not in ignored}
            row = [name, item.get_label(), sorted(attributes.items()), item.get_secret().hex(), item.get_secret_content_type()]
            if dates:
                row += [item.get_created(), item.get_modified()]
            rows.append(json.dumps(row, ensure_ascii=False))
    print("\n".join(sorted(rows)))


def lock(label):
    collection = collection_labelled(label)
    _, prompt = connection.send_and_get_reply(new_method_call(SERVICE, "Lock", "ao", ([collection.collection_path],))).body
    if prompt != "/":
        exec_prompt(connection, prompt)
    # KeePassXC completes the prompt before its database is locked.
    for _ in range(100):
        if collection.is_locked():
            return
        time.sleep(0.05)
    sys.exit("%r did not lock" % label)


def unlock(label):
    collection = collection_labelled(label)
    _, prompt = connection.send_and_get_reply(new_method_call(SERVICE, "Unlock", "ao", ([collection.collection_path],))).body
    if prompt != "/":
        exec_prompt(connection, prompt)
    for _ in range(100):
        if not collection.is_locked():
            return
        time.sleep(0.05)
    sys.exit("%r did not unlock" % label)


def open_keepassxc(file):
    window = DBusAddress("/keepassxc", bus_name="org.keepassxc.KeePassXC.MainWindow", interface="org.keepassxc.KeePassXC.MainWindow")
    connection.send_and_get_reply(new_method_call(window, "openDatabase", "ss", (file, sys.stdin.readline().rstrip("\n"))))


command = sys.argv[1]
if command == "fill":
    fill(sys.argv[2])
elif command == "dump":
    dates = sys.argv[2:3] == ["--dates"]
    dump(set(sys.argv[3 if dates else 2:]), dates)
elif command == "lock":
    lock(sys.argv[2])
elif command == "unlock":
    unlock(sys.argv[2])
elif command == "open-keepassxc":
    open_keepassxc(sys.argv[2])
else:
    sys.exit("unknown command %r" % command)
