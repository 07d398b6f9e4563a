/// Why a keychain operation failed. Messages name what went wrong and where, never a secret,
/// an account name or a value.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No item matches the query.
    case itemNotFound
    /// An item with the same identity (class, access group, service/server, account, ...) exists.
    case duplicateItem
    /// The item's class key is not available: the vault is locked (or was never unlocked since
    /// boot, for afterFirstUnlock items). Unlock it with the passphrase.
    case locked
    /// The passphrase given does not open the vault. Nothing was changed.
    case wrongPassphrase
    /// The operation needs a vault protected by a passphrase (whenPasscodeSetThisDeviceOnly).
    case passphraseRequired
    /// The value is larger than the store accepts.
    case valueTooLarge(limit: Int)
    /// The request itself is malformed (an empty key, an attribute the class cannot carry...).
    case invalidArgument(String)
    /// The vault file is damaged: not a vault, truncated, or failing its checksums.
    case corrupted(String)
    /// The vault's authenticated data failed verification: bytes were altered, moved between
    /// rows, or copied from another vault.
    case tampered(String)
    /// The vault was written by a newer, unknown format version.
    case unsupportedFormatVersion(Int)
    /// The item is bound to another machine (a ThisDeviceOnly class in a copied vault).
    case boundToAnotherMachine
    /// The vault's files are readable by other users; the vault refuses to use them.
    case insecurePermissions(path: String)
    /// A vault file, key file or directory the vault refuses to use, and why: another user
    /// owns it, others may write the directory, it is a symbolic link or not a regular file.
    case untrusted(path: String, reason: String)
    /// There is no vault at the path yet (one is created by the first write).
    case noVault(path: String)
    /// The vault is missing (or empty) but its key file is there: the vault was most probably
    /// moved, deleted or truncated. Nothing is created over it: that would orphan the key.
    case orphanedKeyFile(vault: String, keyFile: String)
    /// The store's backend cannot be reached or used here.
    case unavailable(String)
    /// A file-system or database failure (disk full, read-only, permission denied...).
    case io(String)
    /// The user cancelled or declined the proof of presence an item needs (``AccessControl``).
    case userCancelled
    /// The proof of presence was wrong (the passphrase given does not open the item). Nothing changed.
    case authenticationFailed
    /// The item needs a proof of presence and this operation may not ask for one.
    case interactionNotAllowed
    /// The Secret Service collection (named) is locked. It is unlocked by the desktop (login,
    /// or the keyring manager), never by this library, which would prompt.
    case collectionLocked(String)
    /// A change was sent but the store did not confirm it in time: it may or may not have
    /// happened (the Secret Service may still apply a write it did not acknowledge). Check
    /// the item before retrying.
    case outcomeUnknown(String)
    /// Part of a batch was applied and could not be undone (the Secret Service has no
    /// transactions): what remains applied is described.
    case partlyApplied(String)

    public var description: String {
        switch self {
        case .itemNotFound: "The item was not found."
        case .duplicateItem: "An item with the same identity already exists."
        case .locked: "The vault is locked: unlock it with its passphrase to reach this item."
        case .wrongPassphrase: "The passphrase is incorrect."
        case .passphraseRequired: "This needs a vault protected by a passphrase (whenPasscodeSetThisDeviceOnly); set one first."
        case .valueTooLarge(let limit): "The value is larger than the \(limit)-byte limit."
        case .invalidArgument(let why): "Invalid argument: \(why)."
        case .corrupted(let why): "The vault is corrupted: \(why)."
        case .tampered(let why): "The vault failed verification (tampered or foreign data): \(why)."
        case .unsupportedFormatVersion(let v): "The vault uses format version \(v), which this version of the library does not know."
        case .boundToAnotherMachine: "The item is bound to another machine (ThisDeviceOnly) and cannot be opened here."
        case .insecurePermissions(let path): "Refusing to use \(path): it is readable or writable by other users (expected mode 0600, directory 0700)."
        case .untrusted(let path, let reason): "Refusing to use \(path): \(reason)."
        case .noVault(let path): "There is no vault at \(path) yet; the first write creates it."
        case .orphanedKeyFile(let vault, let keyFile):
            "The vault \(vault) is missing or empty, but its key file \(keyFile) exists: the vault was probably moved, deleted or truncated. Put it back (or restore a backup); to start a new, empty vault instead, move the key file away first. Nothing was created."
        case .unavailable(let why): "The store is unavailable: \(why)."
        case .io(let why): "I/O error: \(why)."
        case .userCancelled: "The user cancelled the proof of presence this item needs."
        case .authenticationFailed: "The proof of presence was refused: the passphrase does not open this item."
        case .interactionNotAllowed: "This item needs a proof of presence, which this operation may not ask for."
        case .collectionLocked(let name):
            "The Secret Service collection '\(name)' is locked: unlock it by logging in to your desktop or in its keyring manager (Seahorse, KWallet, KeePassXC); `keychain unlock` unlocks only the vault."
        case .outcomeUnknown(let why): "The change may or may not have been applied: \(why). Check the item before retrying."
        case .partlyApplied(let why): "The change was only partly applied and could not be undone: \(why)."
        }
    }
}

extension StoreError {
    /// The `OSStatus` Apple's keychain reports in the same situation: the one table every
    /// face that surfaces status codes uses (SecItem's results, Locksmith's errors,
    /// UICKeyChainStore's NSErrors).
    public var keychainStatus: Int32 {
        switch self {
        case .itemNotFound, .noVault: -25300  // errSecItemNotFound: nothing is there
        case .duplicateItem: -25299  // errSecDuplicateItem
        case .locked, .collectionLocked, .passphraseRequired, .interactionNotAllowed: -25308  // errSecInteractionNotAllowed
        case .userCancelled: -128  // errSecUserCanceled
        case .authenticationFailed, .wrongPassphrase: -25293  // errSecAuthFailed
        case .valueTooLarge, .invalidArgument: -50  // errSecParam
        // Another machine's ThisDeviceOnly item never opens here: no retry after an unlock helps.
        case .unavailable, .boundToAnotherMachine: -25291  // errSecNotAvailable
        case .corrupted, .tampered, .unsupportedFormatVersion: -26275  // errSecDecode
        case .io, .insecurePermissions, .untrusted, .orphanedKeyFile, .outcomeUnknown, .partlyApplied: -36  // errSecIO
        }
    }
}
