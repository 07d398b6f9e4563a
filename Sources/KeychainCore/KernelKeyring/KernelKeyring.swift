internal import CKeyring
import FoundationEssentials
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The user's kernel keyring (`keyctl(2)`), used as a cache that lives until reboot.
///
/// Keys are added to the user keyring (`@u`, shared by every process of the uid) and their
/// permissions opened to the owning user right after creation, while the creating process
/// still possesses them: otherwise a process in another session (a new login, `su`, cron)
/// would be denied reading its own user's key.
struct KernelKeyring: Sendable {
    /// possessor: all; user: view, read, write, search, link, setattr; group and other: none.
    private static let permissions: UInt32 = 0x3f3f_0000

    /// Stores `payload` under `description`, replacing an existing key; with `timeout`, the
    /// kernel drops it that many seconds from now unless ``refresh(_:timeout:)`` pushes it back.
    /// Throws the errno text.
    func store(_ payload: SecretBytes, as description: String, timeout seconds: UInt32? = nil) throws(KernelKeyringError) {
        let id = payload.withUnsafeBytes { bytes in
            ckeyring_add_user_key(description, bytes.baseAddress, bytes.count, CKEYRING_SPEC_USER_KEYRING)
        }
        guard id >= 0 else { throw KernelKeyringError(operation: "add_key", code: errno) }
        guard ckeyring_set_permissions(id, Self.permissions) == 0 else {
            let code = errno
            _ = ckeyring_invalidate(id)
            throw KernelKeyringError(operation: "keyctl setperm", code: code)
        }
        if let seconds, ckeyring_set_timeout(id, max(seconds, 1)) != 0 {
            let code = errno
            _ = ckeyring_invalidate(id)
            throw KernelKeyringError(operation: "keyctl timeout", code: code)
        }
    }

    /// Pushes the expiry of the key under `description` back to `seconds` from now: an idle
    /// timeout, reset by each use.
    func refresh(_ description: String, timeout seconds: UInt32) {
        let id = ckeyring_search_user_key(CKEYRING_SPEC_USER_KEYRING, description)
        if id >= 0 { _ = ckeyring_set_timeout(id, max(seconds, 1)) }
    }

    /// How long the key under `description` has left, as the kernel reports it in
    /// `/proc/keys` (`4m`, `59s`, `perm`); nil when there is no such key.
    func remaining(_ description: String) -> String? {
        let id = ckeyring_search_user_key(CKEYRING_SPEC_USER_KEYRING, description)
        guard id >= 0, let listing = try? FileSystem.readAll("/proc/keys", limit: 1 << 20) else { return nil }
        let wanted = String(UInt32(bitPattern: id), radix: 16)
        let text = listing.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count > 3, fields[0].drop(while: { $0 == "0" }) == wanted.drop(while: { $0 == "0" }) { return String(fields[3]) }
        }
        return nil
    }

    /// The payload stored under `description`, or nil if there is none (or it expired).
    func load(_ description: String, maximumSize: Int = 4096) -> SecretBytes? {
        let id = ckeyring_search_user_key(CKEYRING_SPEC_USER_KEYRING, description)
        guard id >= 0 else { return nil }
        var length = 0
        let payload = SecretBytes(count: maximumSize) { buffer in
            let n = ckeyring_read(id, buffer.baseAddress, buffer.count)
            length = n < 0 ? -1 : Int(n)
        }
        guard length >= 0, length <= maximumSize else { return nil }
        return payload.withUnsafeBytes { SecretBytes(UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
    }

    /// The serial number of the key under `description`, or nil when there is none.
    func serial(of description: String) -> Int32? {
        let id = ckeyring_search_user_key(CKEYRING_SPEC_USER_KEYRING, description)
        return id >= 0 ? id : nil
    }

    /// The payload of the key numbered `serial`, for a payload that is no secret (at most
    /// `limit` bytes): a read without the search, for a key read at every use. Nil when that key
    /// is gone, expired or not readable here.
    func read(serial: Int32, limit: Int) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = buffer.withUnsafeMutableBytes { ckeyring_read(serial, $0.baseAddress, $0.count) }
        guard count >= 0, count <= limit else { return nil }
        return Array(buffer[..<Int(count)])
    }

    /// Removes the key stored under `description`, if any.
    func remove(_ description: String) {
        let id = ckeyring_search_user_key(CKEYRING_SPEC_USER_KEYRING, description)
        guard id >= 0 else { return }
        if ckeyring_invalidate(id) != 0 {
            _ = ckeyring_unlink(id, CKEYRING_SPEC_USER_KEYRING)
        }
    }

    /// Whether this process may use the kernel keyring (some seccomp profiles refuse keyctl).
    /// Probes with a short-lived key of its own.
    func probe() -> Result<Void, KernelKeyringError> {
        let description = "swift-keychain:probe:\(getpid())"
        do {
            try store(SecretBytes([1]), as: description)
        } catch {
            return .failure(error)
        }
        defer { remove(description) }
        guard let value = load(description), value.count == 1 else {
            return .failure(KernelKeyringError(operation: "keyctl read", code: errno))
        }
        return .success(())
    }
}

struct KernelKeyringError: Error, CustomStringConvertible {
    let operation: String
    let code: Int32
    var description: String { "\(operation): \(String(cString: strerror(code)))" }
}
