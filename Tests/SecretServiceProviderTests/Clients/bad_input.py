"""Sends the Secret Service on DBUS_SESSION_BUS_ADDRESS calls that are wrong on purpose, through
jeepney, and prints one line per case: its name, then the D-Bus error name it got (or 'ok').
Ends by checking that the daemon still answers a good call."""
import sys

from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection

ROOT = "/org/freedesktop/secrets"
DH = "dh-ietf1024-sha256-aes128-cbc-pkcs7"
PRIME = int(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF", 16)

a = open_dbus_connection(bus="SESSION")
b = open_dbus_connection(bus="SESSION")


def call(connection, path, interface, method, signature=None, *body):
    address = DBusAddress(path, bus_name="org.freedesktop.secrets", interface=interface)
    reply = connection.send_and_get_reply(new_method_call(address, method, signature, body), timeout=20)
    if reply.header.message_type == MessageType.error:
        return reply.header.fields[HeaderFields.error_name], reply.body
    return "ok", reply.body


def service(connection, method, signature=None, *body):
    return call(connection, ROOT, "org.freedesktop.Secret.Service", method, signature, *body)


def report(name, result):
    print(name, result[0])
    sys.stdout.flush()


report("search-with-a-string", service(a, "SearchItems", "s", "x"))
report("open-session-no-arguments", service(a, "OpenSession"))
report("open-session-unknown-algorithm", service(a, "OpenSession", "sv", "rot13", ("s", "")))
report("unknown-method", service(a, "Frobnicate"))
report("unknown-collection", call(a, ROOT + "/collection/nope", "org.freedesktop.Secret.Collection", "SearchItems", "a{ss}", {}))
report("unknown-item", call(a, ROOT + "/collection/login/0123456789abcdef", "org.freedesktop.Secret.Item", "Delete"))
report("path-outside-the-tree", call(a, ROOT + "/collection/login/Not_An_Id/x", "org.freedesktop.Secret.Item", "Delete"))
for name, value in [("zero", b"\x00"), ("one", b"\x01"), ("p-minus-one", (PRIME - 1).to_bytes(128, "big")),
                    ("p", PRIME.to_bytes(128, "big")), ("too-long", b"\x02" * 300), ("empty", b"")]:
    report("dh-public-" + name, service(a, "OpenSession", "sv", DH, ("ay", value)))
report("dh-public-as-string", service(a, "OpenSession", "sv", DH, ("s", "2")))

# Client A opens a plain session and stores an item; client B may not use A's session.
status, (output, session) = service(a, "OpenSession", "sv", "plain", ("s", ""))
properties = {"org.freedesktop.Secret.Item.Label": ("s", "bad-input"), "org.freedesktop.Secret.Item.Attributes": ("a{ss}", {"case": "bad-input"})}
status, (item, prompt) = call(a, ROOT + "/aliases/default", "org.freedesktop.Secret.Collection", "CreateItem", "a{sv}(oayays)b",
                              properties, (session, b"", b"value-of-a", "text/plain"), True)
report("create-item", (status,))
report("get-secret-with-another-clients-session", call(b, item, "org.freedesktop.Secret.Item", "GetSecret", "o", session))
report("get-secrets-with-another-clients-session", service(b, "GetSecrets", "aoo", [item], session))
report("close-another-clients-session", call(b, session, "org.freedesktop.Secret.Session", "Close"))
report("get-secret-with-no-session", call(a, item, "org.freedesktop.Secret.Item", "GetSecret", "o", "/"))
report("set-secret-plain-with-parameters", call(a, item, "org.freedesktop.Secret.Item", "SetSecret", "(oayays)", (session, b"iv", b"x", "text/plain")))
report("create-item-wrong-signature", call(a, ROOT + "/aliases/default", "org.freedesktop.Secret.Collection", "CreateItem", "a{sv}(oayays)", properties,
                                           (session, b"", b"x", "text/plain")))
report("oversized-secret", call(a, ROOT + "/aliases/default", "org.freedesktop.Secret.Collection", "CreateItem", "a{sv}(oayays)b",
                                properties, (session, b"", b"x" * (2 << 20), "text/plain"), False))
report("too-many-attributes", service(a, "SearchItems", "a{ss}", {str(i): "v" for i in range(1000)}))
report("set-read-only-property", call(a, item, "org.freedesktop.DBus.Properties", "Set", "ssv", "org.freedesktop.Secret.Item", "Locked", ("b", True)))

# A Diffie-Hellman session's secret that does not decrypt.
status, (output, dh_session) = service(a, "OpenSession", "sv", DH, ("ay", (2).to_bytes(128, "big")))
report("dh-set-secret-bad-iv", call(a, item, "org.freedesktop.Secret.Item", "SetSecret", "(oayays)", (dh_session, b"short", b"\x00" * 16, "text/plain")))
report("dh-set-secret-not-blocks", call(a, item, "org.freedesktop.Secret.Item", "SetSecret", "(oayays)", (dh_session, b"\x00" * 16, b"\x00" * 15, "text/plain")))

# Sessions opened in a loop past the per-client limit: never refused (the oldest make room), never fatal.
opened, refused = [], None
for _ in range(1100):
    status, body = service(b, "OpenSession", "sv", "plain", ("s", ""))
    if status != "ok":
        refused = status
        break
    opened.append(body[1])
report("thousands-of-sessions", (refused or "ok",))
for path in opened:
    call(b, path, "org.freedesktop.Secret.Session", "Close")
report("session-after-closing", service(b, "OpenSession", "sv", "plain", ("s", "")))

# After all that, the daemon still answers, and A's item still holds its secret.
report("still-up", service(a, "ReadAlias", "s", "default"))
status, (secret,) = call(a, item, "org.freedesktop.Secret.Item", "GetSecret", "o", session)
print("secret-intact", "ok" if secret[2] == b"value-of-a" else "changed")
