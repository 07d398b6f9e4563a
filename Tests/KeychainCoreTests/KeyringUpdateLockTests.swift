import Foundation
import Testing

@testable import KeychainCore

/// The user's processes take turns at updating one kernel keyring key: concurrent read, change
/// and replace updates, each adding its own entry, keep every entry. Threads stand in for
/// processes: the lock is a name bound by a socket, which two threads contend for as two
/// processes do.
@Suite(
    "Kernel keyring updates take turns",
    .enabled(if: KernelKeyring().probe().isSuccess, "the kernel keyring (keyctl) is refused here"))
struct KeyringUpdateLockTests {
    @Test("concurrent updates of one keyring key, each adding an entry, lose none of them")
    func concurrentUpdatesKeepEveryEntry() {
        let description = "swift-keychain:test:update-lock:\(getpid()):\(UInt32.random(in: 0...UInt32.max))"
        let keyring = KernelKeyring()
        defer { keyring.remove(description) }
        let writers = 4
        let entries = 60
        DispatchQueue.concurrentPerform(iterations: writers) { writer in
            for entry in 0..<entries {
                KeyringUpdateLock.withLock(description) { _ in
                    let stored = keyring.load(description).map { $0.withUnsafeBytes { Array($0) } } ?? []
                    // Widens the window between read and replace, as a loaded machine would.
                    usleep(200)
                    try? keyring.store(SecretBytes(stored + [UInt8(writer), UInt8(entry)]), as: description)
                }
            }
        }
        let stored = keyring.load(description).map { $0.withUnsafeBytes { Array($0) } } ?? []
        #expect(stored.count == writers * entries * 2, "entries lost to concurrent updates: \(writers * entries - stored.count / 2)")
    }
}
