"""Times one Secret Service provider for keychain-bench, through the calls its clients make, on the
session bus of DBUS_SESSION_BUS_ADDRESS, whose default collection holds the N items of
gnome_keyring_file.py (item n: service "keychain-bench", account "user-n", secret "secret-n").

  secret_service_compare.py fill N            stores items 0..N-1 through CreateItem
  secret_service_compare.py measure N RUNS OPS STORES

`measure` prints one JSON object of per-run rates (operations per second) after one warm-up run of
OPS calls each (STORES stores: a store into a large gnome-keyring takes seconds):
  "store":  CreateItem of a new item, replace=True (as libsecret and secret-tool store), through
            Python secretstorage on one connection and its default (DH) session;
  "search": Service.SearchItems on service and account, one item found;
  "lookup": `secret-tool lookup service keychain-bench account user-n`, a new process per call.
The items a run stores are deleted after it, untimed, so that every run sees N items.
"""
import json
import random
import subprocess
import sys
import time

import secretstorage

SERVICE = "keychain-bench"


def attributes(account):
    return {"xdg:schema": "org.keychain.Bench", "service": SERVICE, "account": account}


connection = secretstorage.dbus_init()
collection = secretstorage.get_default_collection(connection)
if collection.is_locked():
    sys.exit("the default collection is locked")
count = int(sys.argv[2])

if sys.argv[1] == "fill":
    for n in range(count):
        collection.create_item("keychain-bench %d" % n, attributes("user-%d" % n), b"secret-%d" % n)
    sys.exit(0)

runs, operations, stores = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
chosen = random.Random(7)
rates = {"store": [], "search": [], "lookup": []}


def timed(name, run, body, calls=None):
    calls = calls or operations
    start = time.perf_counter()
    for index in range(calls):
        body(index)
    if run >= 0:
        rates[name].append(calls / (time.perf_counter() - start))


for run in range(-1, runs):
    stored = []
    timed("store", run, lambda i: stored.append(
        collection.create_item("keychain-bench new", attributes("new-%d-%d" % (run, i)), b"new secret", replace=True)), stores)
    for item in stored:
        item.delete()

    def search(_):
        n = chosen.randrange(count)
        found = list(secretstorage.search_items(connection, {"service": SERVICE, "account": "user-%d" % n}))
        if len(found) != 1:
            sys.exit("SearchItems found %d items for user-%d" % (len(found), n))
    timed("search", run, search)

    def lookup(_):
        n = chosen.randrange(count)
        out = subprocess.run(["secret-tool", "lookup", "service", SERVICE, "account", "user-%d" % n], capture_output=True)
        if out.stdout != b"secret-%d" % n:
            sys.exit("secret-tool lookup of user-%d printed %r (%s)" % (n, out.stdout, out.stderr.decode().strip()))
    timed("lookup", run, lookup)

print(json.dumps(rates))
