"""How keychain serve shares itself between clients, through jeepney: one line per check, its
name then 'ok' or the D-Bus error name it got. Argument: 'sessions' (an unlocked vault) or
'prompts' (a locked one)."""
import re
import sys

from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection

ROOT = "/org/freedesktop/secrets"


def call(connection, path, interface, method, signature=None, *body):
    address = DBusAddress(path, bus_name="org.freedesktop.secrets", interface=interface)
    reply = connection.send_and_get_reply(new_method_call(address, method, signature, body), timeout=20)
    if reply.header.message_type == MessageType.error:
        return reply.header.fields[HeaderFields.error_name], reply.body
    return "ok", reply.body


def service(connection, method, signature=None, *body):
    return call(connection, ROOT, "org.freedesktop.Secret.Service", method, signature, *body)


def report(name, status):
    print(name, status)
    sys.stdout.flush()


a = open_dbus_connection(bus="SESSION")
b = open_dbus_connection(bus="SESSION")

if sys.argv[1] == "sessions":
    # One client opens sessions and never closes one, as secretstorage does: never refused.
    opened, refused = [], None
    for _ in range(5000):
        status, body = service(a, "OpenSession", "sv", "plain", ("s", ""))
        if status != "ok":
            refused = status
            break
        opened.append(body[1])
    report("one-client-5000-sessions", refused or "ok")
    report("another-client-served", service(b, "OpenSession", "sv", "plain", ("s", ""))[0])
    report("newest-session-usable", call(a, opened[-1], "org.freedesktop.Secret.Session", "Close")[0] if opened else "none")
    report("session-paths-random", "ok" if all(re.fullmatch(r"[0-9a-f]{16}", p.rsplit("/", 1)[1]) for p in opened[:10]) else opened[0] if opened else "none")

    # The in-memory session collection takes 1 MiB secrets until it is full, then refuses.
    status, (_, session) = service(b, "OpenSession", "sv", "plain", ("s", ""))
    created, refused = [], None
    for index in range(64):
        properties = {"org.freedesktop.Secret.Item.Label": ("s", "big"), "org.freedesktop.Secret.Item.Attributes": ("a{ss}", {"fill": str(index)})}
        status, body = call(b, ROOT + "/aliases/session", "org.freedesktop.Secret.Collection", "CreateItem", "a{sv}(oayays)b",
                            properties, (session, b"", b"x" * (1 << 20), "text/plain"), False)
        if status != "ok":
            refused = status
            break
        created.append(body[0])
    report("session-collection-bounded", refused or "never refused")
    # Deleting an item makes room again.
    if created:
        call(b, created[0], "org.freedesktop.Secret.Item", "Delete")
    properties = {"org.freedesktop.Secret.Item.Label": ("s", "big"), "org.freedesktop.Secret.Item.Attributes": ("a{ss}", {"fill": "again"})}
    report("room-after-delete", call(b, ROOT + "/aliases/session", "org.freedesktop.Secret.Collection", "CreateItem", "a{sv}(oayays)b",
                                     properties, (session, b"", b"x" * (1 << 20), "text/plain"), False)[0])
elif sys.argv[1] == "many-clients":
    # Sixteen connections of one program hold 1,024 sessions each, what filled the daemon before:
    # a client that comes next is still served.
    holders = [open_dbus_connection(bus="SESSION") for _ in range(16)]
    refused = None
    for holder in holders:
        for _ in range(1024):
            status, _ = service(holder, "OpenSession", "sv", "plain", ("s", ""))
            if status != "ok":
                refused = refused or status
    report("sixteen-clients-hold-16384", refused or "ok")
    report("next-client-served", service(a, "OpenSession", "sv", "plain", ("s", ""))[0])
else:
    # A prompt belongs to the client Unlock answered.
    status, (unlocked, prompt) = service(a, "Unlock", "ao", [ROOT + "/collection/login"])
    report("prompt-handed-out", "ok" if prompt != "/" else "no prompt")
    report("prompt-path-random", "ok" if re.fullmatch(r"[0-9a-f]{16}", prompt.rsplit("/", 1)[1]) else prompt)
    report("dismiss-by-another-client", call(b, prompt, "org.freedesktop.Secret.Prompt", "Dismiss")[0])
    report("prompt-by-another-client", call(b, prompt, "org.freedesktop.Secret.Prompt", "Prompt", "s", "")[0])
    report("dismiss-by-its-client", call(a, prompt, "org.freedesktop.Secret.Prompt", "Dismiss")[0])
