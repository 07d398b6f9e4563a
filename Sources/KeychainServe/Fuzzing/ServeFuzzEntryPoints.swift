import FoundationEssentials
import KeychainCore

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's message handlers as a fuzz target: a sequence of calls (``CallScript``) from
/// several clients goes to the daemon `keychain serve` runs (``SecretServiceDaemon/init(serving:on:)``:
/// `login`, the synchronized collection and those the calls create, in a real vault file, and
/// `session` in memory), with no bus. A crash or a sanitizer report is a failure,
/// and so is a broken promise:
///
/// - every answered call's reply has the signature the method announces (clients build their
///   proxies from it, and libsecret refuses a reply of another shape);
/// - after the sequence, every vault collection is whole: each item's record reads, and a
///   search on each of its attribute pairs finds it (the id lists and the index rows kept up
///   with every create, change and delete the calls made).
@_spi(Fuzzing) public enum ServeFuzzEntryPoints {
    /// Runs the calls `bytes` describe.
    @discardableResult
    public static func handlers(_ bytes: [UInt8]) -> Bool {
        guard let vault = FuzzVault.shared.vault else { return false }
        let daemon = SecretServiceDaemon(serving: vault, on: nil)
        var script = CallScript(bytes)
        var calls = 0
        while !script.isExhausted && calls < 48 {
            calls += 1
            switch script.nextStep() {
            case .clientLeft(let name):
                daemon.clientLeft(name)
            case .call(let call):
                guard let (reply, _) = try? daemon.respond(to: call) else { continue }
                checkShape(of: reply, for: call)
                script.learn(reply, answering: call)
            }
        }
        let vaultCollections = daemon.collections.vaultCollections
        for collection in vaultCollections { checkWhole(collection) }
        // The next input starts from an empty vault (the synchronized collection is never
        // deleted: its items are).
        for collection in vaultCollections {
            for id in (try? collection.itemIDs()) ?? [] { try? collection.delete(id) }
            try? collection.deleteCollection()
        }
        return true
    }

    /// The reply signature the called method announces, where the call named one.
    private static func checkShape(of reply: [BusValue], for call: IncomingCall) {
        let announced: String?
        switch call.interface {
        case IntrospectableInterface.name: announced = "s"
        default: announced = SecretServiceDaemon.methods[call.interface]?[call.member]?.reply
        }
        guard let announced else { return }
        let given = reply.map(\.signature).joined()
        precondition(given == announced, "\(call.interface).\(call.member) replied '\(given)', announcing '\(announced)'")
    }

    private static func checkWhole(_ collection: VaultCollection) {
        guard let ids = try? collection.itemIDs() else { return }
        for id in ids {
            guard let record = try? collection.record(id) else { preconditionFailure("item \(id) of \(collection.name) is listed but its record does not read") }
            for (name, value) in record.attributes {
                let found = (try? collection.search([name: value])) ?? []
                precondition(found.contains(id), "a search of \(collection.name) on one of its pairs misses item \(id)")
            }
        }
    }
}

/// The vault the fuzz target's daemons keep their items in: one per process, in a fresh
/// directory of the temporary directory (TMPDIR), removed when the process exits.
private final class FuzzVault: Sendable {
    static let shared = FuzzVault()
    let vault: Vault?
    let directory: String

    private init() {
        directory = FileManager.default.temporaryDirectory.path + "/keychain-serve-fuzz-" + ItemID.make()
        guard (try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])) != nil
        else {
            vault = nil
            return
        }
        vault = try? Vault(
            VaultConfiguration(
                location: VaultLocation(path: directory + "/fuzz.keychain"), idleTimeout: nil, usesKernelKeyring: false,
                machineIdentity: MachineIdentity(paths: []), syncsInBackground: false))
        atexit { try? FileManager.default.removeItem(atPath: FuzzVault.shared.directory) }
    }
}
