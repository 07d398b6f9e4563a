import Foundation
import KeychainCore

/// The stores every behaviour runs against.
public enum StoreUnderTest: String, CaseIterable, Sendable, CustomStringConvertible {
    case vault
    case secretService = "secret-service"
    public var description: String { rawValue }
}

/// Whether a Secret Service answers here (CI starts one with scripts/secret-service.sh).
public enum SecretServiceEnvironment {
    /// Why the Secret Service suites cannot run here, or nil when they can.
    public static let unavailableReason: String? = {
        guard SecretServiceStore.isLibraryAvailable else { return "libsecret is not installed (apt-get install libsecret-1-0)" }
        guard ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] != nil else {
            return "no session bus: run the tests under `eval \"$(scripts/secret-service.sh start)\"`"
        }
        do {
            let probe = try SecretServiceStore(.init(timeout: .seconds(5))).probe()
            return probe.locked ? "the default collection is locked" : nil
        } catch {
            return "the Secret Service does not answer: \(error)"
        }
    }()

    public static var isAvailable: Bool { unavailableReason == nil }
}

/// A fresh, private store of one kind: a vault in a temporary directory, or a partition of
/// the Secret Service's default collection that no other test sees (removed at the end).
public final class TestStore: @unchecked Sendable {
    public let kind: StoreUnderTest
    public let directory = TemporaryDirectory()
    public let store: any Store
    public let partition = "test-" + UUID().uuidString

    /// For the Secret Service: which items of other programs this store sees.
    public let foreignItems: SecretServiceStore.ForeignItems

    public init(_ kind: StoreUnderTest, passphrase: String? = nil, foreignItems: SecretServiceStore.ForeignItems = .hidden) throws {
        self.kind = kind
        self.foreignItems = foreignItems
        switch kind {
        case .vault:
            let vault = try Vault(directory.vaultConfiguration())
            if let passphrase { try vault.changePassphrase(from: nil, to: SecretBytes(utf8: passphrase)) }
            store = vault
        case .secretService:
            store = try SecretServiceStore(.init(timeout: .seconds(10), partition: partition, foreignItems: foreignItems))
        }
    }

    deinit {
        if kind == .secretService {
            // Everything in the test's partition, other programs' items planted by the test included.
            _ = try? SecretServiceStore(.init(timeout: .seconds(10), partition: partition, foreignItems: .readWrite)).delete(Query())
        }
    }

    /// The vault, for behaviours only a vault has.
    public var vault: Vault? { store as? Vault }

    /// Another handle on the same data, as a new process or a reopened store would have.
    public func reopened() throws -> any Store {
        switch kind {
        case .vault: return try Vault(directory.vaultConfiguration())
        case .secretService: return try SecretServiceStore(.init(timeout: .seconds(10), partition: partition, foreignItems: foreignItems))
        }
    }

    /// Arguments and environment that make the `keychain` command use this store.
    public var commandArguments: [String] {
        switch kind {
        case .vault: ["--vault", directory.vaultPath()]
        case .secretService: ["--backend", "secret-service"]
        }
    }

    public var commandEnvironment: [String: String] {
        var environment: [String: String] = [:]
        if kind == .secretService {
            environment["KEYCHAIN_PARTITION"] = partition
            environment["DBUS_SESSION_BUS_ADDRESS"] = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"]
        }
        return environment
    }

    /// Runs `keychain` against this store (options go after the command name).
    public func command(_ arguments: [String], input: Data = Data(), environment: [String: String] = [:]) throws -> CommandResult {
        let full = [arguments[0]] + commandArguments + arguments.dropFirst()
        return try KeychainExecutable.run(full, input: input, environment: commandEnvironment.merging(environment) { $1 }, home: directory.path)
    }
}
