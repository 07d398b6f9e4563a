"""Aliases kept across restarts of `keychain serve`. Steps, each run by a daemon of its own:
'set' makes collections Work and Temp, points 'mine' and 'default' at Work and 'temp' at Temp,
then deletes Temp; 'check' finds 'mine' and 'default' on Work and 'temp' gone, makes a new Temp,
then removes 'mine' and points 'default' back at login; 'gone' finds 'mine' and 'temp' unset
and 'default' on login; 'stored' finds what secret-tool stored through 'default' in Work.
Prints 'ok' when every step gave what it should."""
import sys

import secretstorage
from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection

ROOT = "/org/freedesktop/secrets"
SERVICE = "org.freedesktop.Secret.Service"
connection = open_dbus_connection(bus="SESSION")


def call(method, signature=None, *body):
    address = DBusAddress(ROOT, bus_name="org.freedesktop.secrets", interface=SERVICE)
    reply = connection.send_and_get_reply(new_method_call(address, method, signature, body), timeout=20)
    assert reply.header.message_type != MessageType.error, (method, reply.header.fields[HeaderFields.error_name], reply.body)
    return reply.body


def alias(name):
    return call("ReadAlias", "s", name)[0]


work, login = ROOT + "/collection/work", ROOT + "/collection/login"
step = sys.argv[1]
client = secretstorage.dbus_init()
if step == "set":
    assert secretstorage.create_collection(client, "Work").collection_path == work
    temp = secretstorage.create_collection(client, "Temp")
    call("SetAlias", "so", "mine", work)
    call("SetAlias", "so", "default", work)
    call("SetAlias", "so", "temp", temp.collection_path)
    assert (alias("mine"), alias("default"), alias("temp")) == (work, work, temp.collection_path)
    temp.delete()
elif step == "check":
    assert (alias("mine"), alias("default"), alias("temp")) == (work, work, "/"), (alias("mine"), alias("default"), alias("temp"))
    # A collection of the deleted one's name does not inherit its alias.
    assert secretstorage.create_collection(client, "Temp").collection_path == ROOT + "/collection/temp"
    call("SetAlias", "so", "mine", "/")
    call("SetAlias", "so", "default", login)
elif step == "stored":
    # What secret-tool stored through the default alias is in Work, not in login.
    assert [i.get_secret() for i in secretstorage.Collection(client, work).search_items({"service": "aliased"})] == [b"in-work"]
    assert list(secretstorage.Collection(client, login).search_items({"service": "aliased"})) == []
else:
    assert (alias("mine"), alias("default"), alias("temp")) == ("/", login, "/"), (alias("mine"), alias("default"), alias("temp"))
print("ok")
