"""Python keyring (its SecretService backend, over secretstorage) against the Secret Service on
DBUS_SESSION_BUS_ADDRESS: set, get, replace and delete a password. Prints 'ok'."""
import keyring
from keyring.backends import SecretService

keyring.set_keyring(SecretService.Keyring())
keyring.set_password("deploy.example.com", "ci", "first")
assert keyring.get_password("deploy.example.com", "ci") == "first"
keyring.set_password("deploy.example.com", "ci", "second")
assert keyring.get_password("deploy.example.com", "ci") == "second"
assert keyring.get_password("deploy.example.com", "someone-else") is None
keyring.delete_password("deploy.example.com", "ci")
assert keyring.get_password("deploy.example.com", "ci") is None
print("ok")
