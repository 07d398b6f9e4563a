import FoundationEssentials
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A vault passphrase handed to a program without a terminal: the file `KEYCHAIN_PASSPHRASE_FILE`
/// names, or a systemd credential (`LoadCredential=keychain-passphrase:...`, read from
/// `$CREDENTIALS_DIRECTORY/keychain-passphrase`). The one reader of both, for the command and
/// for services using the library.
package enum PassphraseFile {
    /// The longest passphrase accepted; a longer one is refused, never cut.
    package static let maximumLength = TerminalInput.maximumLineLength

    /// The passphrase the environment offers, or nil when it offers none.
    /// - Throws: ``StoreError/untrusted(path:reason:)`` for a passphrase file (or credential)
    ///   of another user's or one others can read, and
    ///   ``StoreError/invalidArgument(_:)`` for one that cannot be read or is too long.
    package static func fromEnvironment(_ environment: [String: String]) throws(StoreError) -> SecretBytes? {
        if let path = environment["KEYCHAIN_PASSPHRASE_FILE"], !path.isEmpty {
            return try read(path, what: "KEYCHAIN_PASSPHRASE_FILE", checkOwnership: true)
        }
        if let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty {
            let path = directory + "/keychain-passphrase"
            if case .present = try VaultFile.entry(path) {
                // The same rules as any passphrase file: the variable may name any directory, and
                // systemd's own credentials pass them: the service user's at mode 0400, or, where
                // the credentials file system has ACLs, root's with the user's read granted by an
                // ACL (its mask shows as group read). No process of the user can make a root-owned file.
                return try read(path, what: "the systemd credential keychain-passphrase", checkOwnership: true, rootOwnedAllowed: true)
            }
        }
        return nil
    }

    /// Whether the environment names a passphrase (without reading it).
    package static func isOffered(by environment: [String: String]) -> Bool {
        if let path = environment["KEYCHAIN_PASSPHRASE_FILE"], !path.isEmpty { return true }
        guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else { return false }
        if case .present? = try? VaultFile.entry(directory + "/keychain-passphrase") { return true }
        return false
    }

    /// A passphrase file's contents without one trailing newline (`\n` or `\r\n`); `what`
    /// names it in errors. Refused as ``fromEnvironment(_:)`` says.
    package static func read(_ path: String, what: String, checkOwnership: Bool = true) throws(StoreError) -> SecretBytes {
        try read(path, what: what, checkOwnership: checkOwnership, rootOwnedAllowed: false)
    }

    private static func read(_ path: String, what: String, checkOwnership: Bool, rootOwnedAllowed: Bool) throws(StoreError) -> SecretBytes {
        let fd: Int32
        do { fd = try SystemCall.open(path, O_RDONLY | O_NOCTTY) } catch { throw .invalidArgument("cannot open \(what) (\(path)): \(error.reason)") }
        defer { SystemCall.close(fd) }
        let info: stat
        do { info = try SystemCall.fstat(fd, path: path) } catch { throw .invalidArgument("cannot inspect \(what) (\(path)): \(error.reason)") }
        let systemdCredential = rootOwnedAllowed && info.st_uid == 0 && info.st_mode & 0o037 == 0
        if checkOwnership && info.st_mode & S_IFMT == S_IFREG && !systemdCredential {
            if info.st_uid != geteuid() {
                throw .untrusted(path: path, reason: "\(what) belongs to uid \(info.st_uid), not to you")
            }
            if info.st_mode & 0o077 != 0 {
                throw .untrusted(path: path, reason: "other users can read or change \(what) (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
            }
        }
        // Room for the limit and a CR LF.
        let contents: SecretBytes
        do { contents = try FileSystem.readAll(fd: fd, limit: maximumLength + 2, path: path) } catch {
            if error.limit != nil { throw .invalidArgument("refusing \(what) (\(path)): the passphrase is longer than \(maximumLength) bytes") }
            throw .invalidArgument("cannot read \(what) (\(path)): \(error.reason)")
        }
        return try contents.withUnsafeBytes { (bytes) throws(StoreError) -> SecretBytes in
            var end = bytes.count
            if end > 0 && bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
            if end > 0 && end < bytes.count && bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            guard end <= maximumLength else {
                throw .invalidArgument("refusing \(what) (\(path)): the passphrase is longer than \(maximumLength) bytes")
            }
            return SecretBytes(UnsafeRawBufferPointer(rebasing: bytes[0..<end]))
        }
    }
}
