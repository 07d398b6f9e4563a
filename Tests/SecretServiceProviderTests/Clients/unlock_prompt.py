"""Unlock and Prompt on a locked `keychain serve`, as a desktop client does: Unlock the login
collection, call Prompt on the prompt it returns, wait for Completed, then read the item stored
with service=x. Mode 'answer' waits for the person at the pinentry; 'dismiss' calls Dismiss once
the file named by the second argument exists. Prints one line per step: 'prompt shown',
'prompting', 'completed unlocked|dismissed PATHS', then 'secret VALUE' or 'locked'."""
import os
import sys
import time

import secretstorage
from jeepney import DBusAddress, HeaderFields, MatchRule, MessageType, new_method_call
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import DBusErrorResponse

ROOT = "/org/freedesktop/secrets"
PROMPT = "org.freedesktop.Secret.Prompt"
mode = sys.argv[1]

connection = open_dbus_connection(bus="SESSION")


def call(path, interface, method, signature=None, *body):
    address = DBusAddress(path, bus_name="org.freedesktop.secrets", interface=interface)
    reply = connection.send_and_get_reply(new_method_call(address, method, signature, body), timeout=20)
    if reply.header.message_type == MessageType.error:
        print("error", reply.header.fields[HeaderFields.error_name], *reply.body, flush=True)
        sys.exit(1)
    return reply.body


unlocked, prompt = call(ROOT, "org.freedesktop.Secret.Service", "Unlock", "ao", [ROOT + "/collection/login"])
print("prompt", "none" if prompt == "/" else "shown", flush=True)
rule = MatchRule(type="signal", interface=PROMPT, member="Completed", path=prompt)
connection.send_and_get_reply(message_bus.AddMatch(rule), timeout=20)
with connection.filter(rule) as completions:
    call(prompt, PROMPT, "Prompt", "s", "")
    print("prompting", flush=True)
    if mode == "dismiss":
        for _ in range(2400):
            if os.path.exists(sys.argv[2]):
                break
            time.sleep(0.025)
        call(prompt, PROMPT, "Dismiss")
    signal = connection.recv_until_filtered(completions, timeout=120)
    dismissed, (_, paths) = signal.body
    print("completed", "dismissed" if dismissed else "unlocked", *paths, flush=True)

# A vault locked since the daemon started lists nothing either (its item rows are closed too).
try:
    items = list(secretstorage.search_items(secretstorage.dbus_init(), {"service": "x"}))
    print("secret", items[0].get_secret().decode(), flush=True)
except (secretstorage.exceptions.LockedException, DBusErrorResponse):
    print("locked", flush=True)
