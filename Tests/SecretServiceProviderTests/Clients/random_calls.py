"""Sends the Secret Service on DBUS_SESSION_BUS_ADDRESS a seeded stream of random calls, through
jeepney: the specification's methods and others, on its objects and on paths it never made, with
random signatures and random values (well-formed D-Bus, so the bus delivers them), some from
clients that hang up before the answer. Calls that would rightly destroy the item it checks at
the end (deleting it or its collection, changing its secret, locking the vault) are left out.

Usage: random_calls.py SEED COUNT. Prints 'answered N', 'errors N', 'hung-up N', then
'still-up ok' and 'secret-intact ok' when the daemon still answers and the item kept its secret."""
import random
import sys

from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection

ROOT = "/org/freedesktop/secrets"
SERVICE = "org.freedesktop.Secret.Service"
COLLECTION = "org.freedesktop.Secret.Collection"
ITEM = "org.freedesktop.Secret.Item"
SESSION = "org.freedesktop.Secret.Session"
PROMPT = "org.freedesktop.Secret.Prompt"
PROPERTIES = "org.freedesktop.DBus.Properties"
INTROSPECTABLE = "org.freedesktop.DBus.Introspectable"
DH = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

METHODS = {
    SERVICE: {"OpenSession": "sv", "CreateCollection": "a{sv}s", "SearchItems": "a{ss}", "Unlock": "ao",
              "GetSecrets": "aoo", "ReadAlias": "s", "SetAlias": "so"},
    COLLECTION: {"Delete": "", "SearchItems": "a{ss}", "CreateItem": "a{sv}(oayays)b"},
    ITEM: {"Delete": "", "GetSecret": "o", "SetSecret": "(oayays)"},
    SESSION: {"Close": ""},
    PROMPT: {"Prompt": "s", "Dismiss": ""},
    PROPERTIES: {"Get": "ss", "GetAll": "s", "Set": "ssv"},
    INTROSPECTABLE: {"Introspect": ""},
}
PROPERTY_NAMES = ["org.freedesktop.Secret.Item.Label", "org.freedesktop.Secret.Item.Attributes",
                  "org.freedesktop.Secret.Collection.Label", "Label", "Attributes", "Locked", "Created", "Items"]
SIMPLE_TYPES = ["s", "o", "ay", "b", "u", "i", "x", "d", "as", "ao", "a{ss}", "a{sv}", "(oayays)", "v"]
NAME_CHARACTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"

seed, count = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
main = open_dbus_connection(bus="SESSION")


def call(connection, path, interface, method, signature=None, *body, timeout=20):
    address = DBusAddress(path, bus_name="org.freedesktop.secrets", interface=interface)
    reply = connection.send_and_get_reply(new_method_call(address, method, signature, body), timeout=timeout)
    if reply.header.message_type == MessageType.error:
        return reply.header.fields[HeaderFields.error_name], reply.body
    return "ok", reply.body


# The item every call below must leave alone.
_, (_, plain) = call(main, ROOT, SERVICE, "OpenSession", "sv", "plain", ("s", ""))
label = {"org.freedesktop.Secret.Item.Label": ("s", "kept"),
         "org.freedesktop.Secret.Item.Attributes": ("a{ss}", {"random-calls": "kept-%d" % seed})}
status, (kept, _) = call(main, ROOT + "/collection/login", COLLECTION, "CreateItem", "a{sv}(oayays)b",
                         label, (plain, b"", b"kept-secret", "text/plain"), True)
assert status == "ok", status
protected = {kept, ROOT + "/collection/login", ROOT + "/aliases/default", plain}
paths = [ROOT, ROOT + "/collection/login", ROOT + "/collection/session", ROOT + "/aliases/default", kept, plain,
         ROOT + "/session/1", ROOT + "/prompt/1", "/", "/org", ROOT + "/collection", ROOT + "/collection/login/0"]


def name(low=1, high=12):
    return rng.choice("abcdefghijklmnopqrstuvwxyz_") + "".join(rng.choice(NAME_CHARACTERS) for _ in range(rng.randint(low, high) - 1))


def text(large=True):
    kind = rng.random()
    if large and kind < 0.01:
        return "x" * 20000
    if kind < 0.3:
        return rng.choice(["", "plain", DH, "login", "default", "session", "text/plain"])
    return "".join(chr(rng.choice([rng.randint(32, 126), rng.randint(0xA0, 0x2FFF)])) for _ in range(rng.randint(0, 40)))


def path():
    if rng.random() < 0.6:
        return rng.choice(paths)
    return ROOT + "/" + "/".join(name() for _ in range(rng.randint(1, 3)))


def value(kind):
    if kind == "s":
        return text()
    if kind == "o":
        return path()
    if kind == "ay":
        return bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 16, 128, rng.randint(0, 600)])))
    if kind == "b":
        return rng.random() < 0.5
    if kind == "u":
        return rng.getrandbits(32)
    if kind == "i":
        return rng.randint(-2**31, 2**31 - 1)
    if kind == "x":
        return rng.randint(-2**63, 2**63 - 1)
    if kind == "d":
        return rng.uniform(-1e9, 1e9)
    if kind == "as":
        return [text() for _ in range(rng.randint(0, 4))]
    if kind == "ao":
        return [path() for _ in range(rng.randint(0, 4))]
    if kind == "a{ss}":
        size = rng.choice([0, 1, 2, 5, 300])
        return {text(large=size < 10): text(large=size < 10) for _ in range(size)}
    if kind == "a{sv}":
        return {rng.choice(PROPERTY_NAMES + [text()]): variant() for _ in range(rng.randint(0, 4))}
    if kind == "(oayays)":
        return (path(), value("ay"), value("ay"), text())
    if kind == "v":
        return variant()
    raise ValueError(kind)


def variant():
    kind = rng.choice([k for k in SIMPLE_TYPES if k != "v"])
    return (kind, value(kind))


def random_call():
    interface = rng.choice(list(METHODS)) if rng.random() < 0.9 else "org." + name() + "." + name()
    known = METHODS.get(interface, {})
    method = rng.choice(list(known)) if known and rng.random() < 0.85 else name()
    if method in known and rng.random() < 0.6:
        signature = known[method]
        types = split(signature)
    else:
        types = [rng.choice(SIMPLE_TYPES) for _ in range(rng.randint(0, 4))]
        signature = "".join(types)
    target = path()
    destructive = method in ("Delete", "SetSecret", "Set", "SetAlias") or (interface == SERVICE and method == "Lock")
    if destructive and (target in protected or interface == SERVICE):
        target = ROOT + "/collection/session"
    body = [value(kind) for kind in types]
    if method == "CreateItem" and signature == METHODS[COLLECTION]["CreateItem"]:
        body[2] = False  # Never replace: the kept item's attributes are not drawn, but be sure.
    return target, interface, method, signature or None, body


def split(signature):
    types, i = [], 0
    while i < len(signature):
        for kind in sorted(SIMPLE_TYPES, key=len, reverse=True):
            if signature.startswith(kind, i):
                types.append(kind)
                i += len(kind)
                break
        else:
            raise ValueError(signature)
    return types


answered = errors = hung_up = 0
for number in range(count):
    target, interface, method, signature, body = random_call()
    if number % 50 == 49:
        # A client that sends a call and hangs up before the answer.
        quitter = open_dbus_connection(bus="SESSION")
        quitter.send(new_method_call(DBusAddress(target, bus_name="org.freedesktop.secrets", interface=interface), method, signature, tuple(body)))
        quitter.close()
        hung_up += 1
        continue
    status, _ = call(main, target, interface, method, signature, *body)
    answered += 1
    if status != "ok":
        errors += 1

print("answered", answered)
print("errors", errors)
print("hung-up", hung_up)
status, _ = call(main, ROOT, SERVICE, "ReadAlias", "s", "default")
print("still-up", status)
_, (_, fresh) = call(main, ROOT, SERVICE, "OpenSession", "sv", "plain", ("s", ""))
status, body = call(main, kept, ITEM, "GetSecret", "o", fresh)
print("secret-intact", "ok" if status == "ok" and body[0][2] == b"kept-secret" else "changed: %s" % status)
