"""A session dies with the client that opened it, and the `session` collection keeps items in
memory. Prints one line per check: its name and 'ok' or what it got."""
import time

import secretstorage
from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection

ROOT = "/org/freedesktop/secrets"


def call(connection, path, interface, method, signature=None, *body, bus_name="org.freedesktop.secrets"):
    address = DBusAddress(path, bus_name=bus_name, interface=interface)
    reply = connection.send_and_get_reply(new_method_call(address, method, signature, body), timeout=20)
    if reply.header.message_type == MessageType.error:
        return reply.header.fields[HeaderFields.error_name], reply.body
    return "ok", reply.body


b = open_dbus_connection(bus="SESSION")
c = open_dbus_connection(bus="SESSION")
status, (output, session) = call(c, ROOT, "org.freedesktop.Secret.Service", "OpenSession", "sv", "plain", ("s", ""))
print("session-of-a-live-client", call(b, session, "org.freedesktop.Secret.Session", "Close")[0])
name = c.unique_name
c.close()
# Once the bus has seen the client go, the daemon has been told before anything b sends next.
for _ in range(400):
    if not call(b, "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", "s", name, bus_name="org.freedesktop.DBus")[1][0]:
        break
    time.sleep(0.025)
print("session-of-a-gone-client", call(b, session, "org.freedesktop.Secret.Session", "Close")[0])

connection = secretstorage.dbus_init()
memory = secretstorage.get_collection_by_alias(connection, "session")
memory.create_item("in memory", {"kept": "in-memory"}, b"not in the vault")
found = list(memory.search_items({"kept": "in-memory"}))
print("session-collection", "ok" if len(found) == 1 and found[0].get_secret() == b"not in the vault" else found)
login = secretstorage.get_default_collection(connection)
print("not-in-login", "ok" if list(login.search_items({"kept": "in-memory"})) == [] else "found")
