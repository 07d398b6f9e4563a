"""Stores COUNT items in the session collection with secretstorage, then reads every secret back
through secretstorage.search_items, which opens a session (Diffie-Hellman) for each item it
yields and never closes one. Prints 'read N wrong M'."""
import sys

import secretstorage

count = int(sys.argv[1])
connection = secretstorage.dbus_init()
collection = secretstorage.Collection(connection, "/org/freedesktop/secrets/aliases/session")
for index in range(count):
    collection.create_item(f"item {index}", {"many": "yes", "n": str(index)}, f"secret {index}".encode())
read, wrong = 0, 0
for item in secretstorage.search_items(connection, {"many": "yes"}):
    number = item.get_attributes()["n"]
    if item.get_secret() != f"secret {number}".encode():
        wrong += 1
    read += 1
print("read", read, "wrong", wrong)
