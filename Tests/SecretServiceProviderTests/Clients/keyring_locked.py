"""Python keyring (its SecretService backend) reading from a locked vault with no pinentry to
show: the unlock it asks for ends dismissed, and keyring raises its own locked error. Prints
'locked' for keyring's KeyringLocked, 'value V' for a value, 'error TYPE: MESSAGE' otherwise."""
import keyring
from keyring.backends import SecretService
from keyring.errors import KeyringLocked

keyring.set_keyring(SecretService.Keyring())
try:
    print("value", keyring.get_password("service", "x"))
except KeyringLocked:
    print("locked")
except Exception as error:
    print("error", type(error).__name__ + ":", error)
