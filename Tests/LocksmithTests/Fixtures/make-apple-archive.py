#!/usr/bin/env python3
"""Writes apple-keyed-archive.bplist: the bytes Foundation's NSKeyedArchiver produces on Apple
platforms for Locksmith's payload

    ["password": "my_password", "pin": 1234, "score": 2.5, "admin": true,
     "created": Date(timeIntervalSinceReferenceDate: 600000000), "token": Data([0xde, 0xad, 0xbe, 0xef]),
     "tags": ["a", "b"], "profile": ["name": "Lone Starr"]]

built independently of swift-corelibs-foundation, from the documented keyed-archive layout
(binary plist; $archiver "NSKeyedArchiver", $version 100000, $top {root: UID}, $objects with
"$null" first; strings, numbers, booleans and data inline; NSDictionary as NS.keys/NS.objects
UID arrays; NSArray as NS.objects; NSDate as NS.time seconds since 2001; each class described
once by $classname/$classes). Apple's archiver uniques equal objects; so does this. Run:
    python3 make-apple-archive.py
"""
import plistlib
from pathlib import Path
from plistlib import UID

objects = ["$null"]
def add(value):
    for index, existing in enumerate(objects):
        if type(existing) is type(value) and existing == value and not isinstance(value, dict):
            return UID(index)
    objects.append(value)
    return UID(len(objects) - 1)

classes = {}
def class_uid(name):
    if name not in classes:
        classes[name] = add({"$classname": name, "$classes": [name, "NSObject"]})
    return classes[name]

def encode(value):
    if isinstance(value, dict):
        # Reserve the slot first, as the archiver does for the object being encoded.
        objects.append(None)
        index = len(objects) - 1
        keys = [encode(k) for k in value]
        values = [encode(v) for v in value.values()]
        objects[index] = {"NS.keys": keys, "NS.objects": values, "$class": class_uid("NSDictionary")}
        return UID(index)
    if isinstance(value, list):
        objects.append(None)
        index = len(objects) - 1
        objects[index] = {"NS.objects": [encode(v) for v in value], "$class": class_uid("NSArray")}
        return UID(index)
    if isinstance(value, tuple) and value[0] == "date":
        objects.append(None)
        index = len(objects) - 1
        objects[index] = {"NS.time": float(value[1]), "$class": class_uid("NSDate")}
        return UID(index)
    return add(value)

payload = {
    "password": "my_password", "pin": 1234, "score": 2.5, "admin": True,
    "created": ("date", 600000000), "token": bytes([0xde, 0xad, 0xbe, 0xef]),
    "tags": ["a", "b"], "profile": {"name": "Lone Starr"},
}
root = encode(payload)
archive = {"$archiver": "NSKeyedArchiver", "$version": 100000, "$top": {"root": root}, "$objects": objects}
Path(__file__).with_name("apple-keyed-archive.bplist").write_bytes(plistlib.dumps(archive, fmt=plistlib.FMT_BINARY, sort_keys=False))
