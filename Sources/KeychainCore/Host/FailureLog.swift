internal import KeychainSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Why the last operation failed, for the faces whose API has no room for the reason: Valet's
/// `KeychainError.couldNotAccessKeychain`, a Locksmith or `SecItem` status code. A locked vault,
/// a wrong passphrase and a passphrase file others can read are one error there; here they are
/// the ``StoreError`` each was.
///
/// With `KEYCHAIN_LOG=1` (or `stderr`) in the environment, each failure a face reports is also
/// written to standard error, one line each, `keychain: ` then the reason (under systemd that
/// is the journal). Reasons name paths and causes, never a secret, an account or a value. A
/// missing item is not a failure here: every face has room for it.
package enum FailureLog {
    /// Kept per thread, as `errno` is: the faces' calls are synchronous, so the thread that
    /// got the error is the one that asks, and another thread's failure never replaces it.
    private final class Entry {
        let error: StoreError
        init(_ error: StoreError) { self.error = error }
    }

    private static let slot: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in pointer.map { Unmanaged<Entry>.fromOpaque($0).release() } }
        return key
    }()

    private static let writes: Bool = {
        guard let value = ProcessEnvironment.value("KEYCHAIN_LOG") else { return false }
        return value == "1" || value == "stderr"
    }()

    /// The reason of the most recent failure a face reported on the calling thread, or nil
    /// when none was.
    package static var last: StoreError? {
        pthread_getspecific(slot).map { Unmanaged<Entry>.fromOpaque($0).takeUnretainedValue().error }
    }

    /// What ``warnOnce(_:)`` already wrote in this process.
    private static let warned = Mutex(Set<String>())

    /// Writes `message` to standard error with `KEYCHAIN_LOG`, once per process: what a call
    /// that succeeded could not vouch for (a vault read whose freshness is unknown). It is not
    /// a failure: ``last`` stays as it was.
    package static func warnOnce(_ message: String) {
        guard writes, warned.withLock({ $0.insert(message).inserted }) else { return }
        try? SystemCall.writeAll(STDERR_FILENO, "keychain: \(message)\n")
    }

    /// Records `error` as the calling thread's last failure, and writes it to standard error
    /// with `KEYCHAIN_LOG`.
    package static func record(_ error: StoreError) {
        if error == .itemNotFound { return }
        if let old = pthread_getspecific(slot) { Unmanaged<Entry>.fromOpaque(old).release() }
        pthread_setspecific(slot, Unmanaged.passRetained(Entry(error)).toOpaque())
        guard writes else { return }
        try? SystemCall.writeAll(STDERR_FILENO, "keychain: \(error.description)\n")
    }
}
