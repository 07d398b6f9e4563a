import Foundation
import KeychainTestSupport
import Valet

import class KeychainCore.SecretBytes
import class KeychainCore.SecretServiceStore
import protocol KeychainCore.Store
import class KeychainCore.Vault

/// A private store per test, and Valets created on it (through ValetStore's task-local choice,
/// so tests running in parallel never share a store).
struct Fixture {
    let testStore: TestStore
    var store: any Store { testStore.store }
    var vault: Vault? { testStore.vault }
    var directory: TemporaryDirectory { testStore.directory }

    init(_ kind: StoreUnderTest = .vault, passphrase: String? = nil, foreignItems: SecretServiceStore.ForeignItems = .hidden) throws {
        testStore = try TestStore(kind, passphrase: passphrase, foreignItems: foreignItems)
    }

    func make<T>(_ body: () throws -> T) rethrows -> T { try ValetStore.withStore(store, body) }

    func valet(_ identifier: String = "Druidia", _ accessibility: Accessibility = .whenUnlocked) -> Valet {
        make { .valet(with: Identifier(nonEmpty: identifier)!, accessibility: accessibility) }
    }

    func cloud(_ identifier: String = "Druidia", _ accessibility: CloudAccessibility = .whenUnlocked) -> Valet {
        make { .iCloudValet(with: Identifier(nonEmpty: identifier)!, accessibility: accessibility) }
    }

    func shared(_ group: String = "Druidia", prefix: String = "AppID12345", identifier: String? = nil, _ accessibility: Accessibility = .whenUnlocked) -> Valet {
        make {
            .sharedGroupValet(
                with: SharedGroupIdentifier(appIDPrefix: prefix, nonEmptyGroup: group)!,
                identifier: Identifier(nonEmpty: identifier), accessibility: accessibility)
        }
    }

    /// One Valet per flavour and accessibility, as Valet's own `permutations(with:)`.
    func permutations(_ identifier: String = "Druidia") -> [Valet] {
        Accessibility.allCases.map { valet(identifier, $0) }
            + CloudAccessibility.allCases.map { cloud(identifier, $0) }
            + Accessibility.allCases.map { shared(identifier: identifier, $0) }
    }
}

let druidia = Identifier(nonEmpty: "Druidia")!
