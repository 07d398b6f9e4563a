import Foundation
import KeychainCore
import Valet

#if canImport(Glibc)
    import Glibc
#endif

/// A program that uses an iCloud Valet on a vault enrolled in sync, and nothing else: no
/// `keychain sync run` beside it. It shows that such a process syncs while it runs.
enum SyncWorker {
    static func valet(_ vaultPath: String) throws -> (Valet, Vault) {
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: vaultPath), usesKernelKeyring: false))
        ValetStore.setDefault(vault)
        return (Valet.iCloudValet(with: Identifier(nonEmpty: "Shared")!, accessibility: .afterFirstUnlock), vault)
    }

    /// Sets `key`, then waits (up to 20 s) until the background sync has sent it; says "sent".
    static func set(vaultPath: String, key: String, value: String) throws -> Int32 {
        let (valet, vault) = try valet(vaultPath)
        try valet.setString(value, forKey: key)
        let engine = try SyncEngine(vault: vault)
        for _ in 0..<200 {
            if try engine.outboxLength() == 0 {
                Workers.say("sent")
                return 0
            }
            usleep(100_000)
        }
        Workers.say("pending")
        return 1
    }

    /// Reads `key` until it holds `value` (up to 20 s); says "arrived".
    static func wait(vaultPath: String, key: String, value: String) throws -> Int32 {
        let (valet, _) = try valet(vaultPath)
        Workers.say("ready")
        for _ in 0..<400 {
            if (try? valet.string(forKey: key)) == value {
                Workers.say("arrived")
                return 0
            }
            usleep(50_000)
        }
        return 1
    }
}
