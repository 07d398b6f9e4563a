import Foundation
import KeychainCore
import KeychainTestSupport
import Testing
import Valet

/// Valet's migration cases (reference §3), written once and run on every store.
enum MigrationBehaviour: String, CaseIterable, Sendable {
    case invalidQueries, noMatch, fromValet, removeOnCompletion, keyAlreadyInDestination, duplicateKeys
    case compactMapTransformsSkipsAndThrows, afterCanAccessKeychain, fromAlwaysAccessibleValet, allOrNothing

    func run(_ fixture: Fixture) throws {
        let destination = fixture.valet("Destination")
        let source = fixture.valet("Source")
        switch self {
        case .invalidQueries:
            let genp: [String: AnyHashable] = [kSecClass as String: kSecClassGenericPassword as String]
            var queries: [[String: AnyHashable]] = [[:], [kSecAttrService as String: "x"], [kSecClass as String: kSecClassInternetPassword as String]]
            for (key, value) in [
                (kSecMatchLimit, AnyHashable(kSecMatchLimitOne)), (kSecReturnData, AnyHashable(true)), (kSecReturnRef, AnyHashable(true)),
                (kSecReturnPersistentRef, AnyHashable(false)), (kSecReturnAttributes, AnyHashable(false)), (kSecAttrAccessControl, AnyHashable("x")),
            ] {
                var query = genp
                query[key as String] = value
                queries.append(query)
            }
            for query in queries {
                for remove in [false, true] {
                    #expect(throws: MigrationError.invalidQuery, "\(query)") { try destination.migrateObjects(matching: query, removeOnCompletion: remove) }
                }
            }

        case .noMatch:
            #expect(throws: KeychainError.itemNotFound) {
                try destination.migrateObjects(
                    matching: [kSecClass as String: kSecClassGenericPassword as String, kSecAttrService as String: "nothing-here"], removeOnCompletion: false)
            }

        case .fromValet:
            try source.setString("12345", forKey: "Skroob")
            try source.setString("helmet", forKey: "Helmet")
            try destination.migrateObjects(from: source, removeOnCompletion: false)
            #expect(try destination.allKeys() == ["Skroob", "Helmet"] && source.allKeys() == ["Skroob", "Helmet"])
            #expect(try destination.string(forKey: "Skroob") == "12345")

        case .removeOnCompletion:
            try source.setString("12345", forKey: "Skroob")
            try destination.migrateObjects(from: source, removeOnCompletion: true)
            #expect(try destination.string(forKey: "Skroob") == "12345")
            #expect(try source.allKeys() == [])

        case .keyAlreadyInDestination:
            try source.setString("new", forKey: "Skroob")
            try source.setString("other", forKey: "Other")
            try destination.setString("old", forKey: "Skroob")
            #expect(throws: MigrationError.keyToMigrateAlreadyExistsInValet) { try destination.migrateObjects(from: source, removeOnCompletion: true) }
            #expect(try destination.allKeys() == ["Skroob"] && destination.string(forKey: "Skroob") == "old")
            #expect(try source.allKeys() == ["Skroob", "Other"])

        case .duplicateKeys:
            try source.setString("a", forKey: "Skroob")
            try fixture.valet("Another").setString("b", forKey: "Skroob")
            #expect(throws: MigrationError.duplicateKeyToMigrate) {
                try destination.migrateObjects(matching: [kSecClass as String: kSecClassGenericPassword as String, kSecAttrAccount as String: "Skroob"], removeOnCompletion: false)
            }
            #expect(try destination.allKeys() == [])

        case .compactMapTransformsSkipsAndThrows:
            for (index, key) in ["keep", "skip", "rename"].enumerated() { try source.setString("value\(index)", forKey: key) }
            struct Abort: Error, Equatable {}
            #expect(throws: Abort()) {
                try destination.migrateObjects(from: source) { pair in
                    if pair.key == AnyHashable("rename") { throw Abort() }
                    return MigratableKeyValuePair(key: pair.key as! String, value: pair.value)
                }
            }
            #expect(try destination.allKeys() == [], "a throwing compactMap migrates nothing")
            try destination.migrateObjects(from: source) { pair in
                switch pair.key as! String {
                case "skip": return nil
                case "rename": return MigratableKeyValuePair(key: "renamed", value: "transformed")
                default: return MigratableKeyValuePair(key: pair.key as! String, value: pair.value)
                }
            }
            #expect(try destination.allKeys() == ["keep", "renamed"])
            #expect(try destination.string(forKey: "renamed") == "transformed" && destination.string(forKey: "keep") == "value0")

        case .afterCanAccessKeychain:
            #expect(source.canAccessKeychain() && destination.canAccessKeychain())
            try source.setString("12345", forKey: "Skroob")
            try destination.migrateObjects(from: source, removeOnCompletion: false)
            #expect(try destination.allKeys() == ["Skroob"])

        case .fromAlwaysAccessibleValet:
            var legacy = Attributes(
                service: "VAL_VALValet_initWithIdentifier:accessibility:_Destination_AccessibleAlways", account: "old-token",
                accessGroup: "", synchronizable: false, accessibility: .always)
            try fixture.store.add(Item(.genericPassword, attributes: legacy, value: SecretBytes(utf8: "from-always")))
            try destination.migrateObjectsFromAlwaysAccessibleValet(removeOnCompletion: true)
            #expect(try destination.string(forKey: "old-token") == "from-always")
            legacy.account = nil
            #expect(throws: StoreError.itemNotFound) { try fixture.store.copyMatching(Query(.genericPassword, attributes: legacy)) }

        case .allOrNothing:
            for index in 0..<20 { try source.setString("value\(index)", forKey: "key\(index)") }
            // The last pair is over the store's 1 MiB limit: the one transaction fails, nothing lands.
            #expect(throws: KeychainError.couldNotAccessKeychain) {
                try destination.migrateObjects(from: source) { pair in
                    let key = pair.key as! String
                    return MigratableKeyValuePair(key: key, value: key == "key19" ? Data(count: 2 << 20) : pair.value)
                }
            }
            #expect(try destination.allKeys() == [])
            #expect(try source.allKeys().count == 20)
        }
    }
}

@Suite("Valet migrations on the vault")
struct MigrationsOnVault {
    @Test(arguments: MigrationBehaviour.allCases)
    func behaviour(_ behaviour: MigrationBehaviour) throws {
        try behaviour.run(Fixture(.vault))
    }
}

@Suite(
    "Valet migrations on the Secret Service",
    .enabled(if: SecretServiceEnvironment.isAvailable, "\(SecretServiceEnvironment.unavailableReason ?? "")"))
struct MigrationsOnSecretService {
    @Test(arguments: MigrationBehaviour.allCases)
    func behaviour(_ behaviour: MigrationBehaviour) throws {
        try behaviour.run(Fixture(.secretService))
    }

    @Test("a Valet on the Secret Service migrates into a Valet on the vault, and back")
    func acrossStores() throws {
        let desktop = try Fixture(.secretService), embedded = try Fixture(.vault)
        try desktop.valet("Druidia").setString("12345", forKey: "Skroob")
        try embedded.valet("Druidia").migrateObjects(from: desktop.valet("Druidia"), removeOnCompletion: true)
        #expect(try embedded.valet("Druidia").string(forKey: "Skroob") == "12345")
        #expect(try desktop.valet("Druidia").allKeys() == [])
        try desktop.valet("Druidia").migrateObjects(from: embedded.valet("Druidia"), removeOnCompletion: true)
        #expect(try desktop.valet("Druidia").string(forKey: "Skroob") == "12345")
        #expect(try embedded.valet("Druidia").allKeys() == [])
    }

    /// Plants two items of another program (no schema of ours) in `desktop`'s partition.
    private func plantLegacyItems(in desktop: Fixture, environment: [String: String]) throws {
        for (account, value) in [("alice", "wonderland"), ("bob", "builder")] {
            let stored = try Subprocess.run(
                "/usr/bin/secret-tool",
                [
                    "store", "--label", "legacy \(account)", "service", "legacy-app", "account", account,
                    "keychain-partition", desktop.testStore.partition,
                ],
                environment: environment, input: Data(value.utf8))
            #expect(stored.status == 0, "\(stored.stderr)")
        }
    }

    private func legacyAccountsLeft(in desktop: Fixture, environment: [String: String]) throws -> String {
        let left = try Subprocess.run(
            "/usr/bin/secret-tool", ["search", "--all", "service", "legacy-app", "keychain-partition", desktop.testStore.partition],
            environment: environment)
        return left.output + left.stderr
    }

    @Test("items another program stored with secret-tool migrate by query only where foreign items are asked for, and are deleted only where allowed")
    func fromAnotherProgram() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = "/usr/bin:/bin"
        let query: [String: AnyHashable] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "legacy-app"]

        // By default other programs' items are invisible: nothing to migrate, nothing touched.
        let hidden = try Fixture(.secretService)
        try plantLegacyItems(in: hidden, environment: environment)
        #expect(throws: KeychainError.itemNotFound) { try hidden.valet("Druidia").migrateObjects(matching: query, removeOnCompletion: true) }
        #expect(try legacyAccountsLeft(in: hidden, environment: environment).contains("alice"))

        // Read-only: they migrate, and stay where they were; removing them is refused, changing nothing.
        let readOnly = try Fixture(.secretService, foreignItems: .readOnly)
        try plantLegacyItems(in: readOnly, environment: environment)
        #expect(throws: KeychainError.couldNotAccessKeychain) { try readOnly.valet("Druidia").migrateObjects(matching: query, removeOnCompletion: true) }
        #expect(try readOnly.valet("Druidia").allKeys().isEmpty, "a refused migration moves nothing")
        try readOnly.valet("Druidia").migrateObjects(matching: query, removeOnCompletion: false)
        #expect(try readOnly.valet("Druidia").string(forKey: "alice") == "wonderland")
        let kept = try legacyAccountsLeft(in: readOnly, environment: environment)
        #expect(kept.contains("alice") && kept.contains("bob"), "the originals stay with their owner")

        // Read-write, asked for explicitly: moved and removed.
        let readWrite = try Fixture(.secretService, foreignItems: .readWrite)
        try plantLegacyItems(in: readWrite, environment: environment)
        let valet = readWrite.valet("Druidia")
        try valet.migrateObjects(matching: query, removeOnCompletion: true)
        #expect(try valet.string(forKey: "alice") == "wonderland" && valet.string(forKey: "bob") == "builder")
        #expect(!(try legacyAccountsLeft(in: readWrite, environment: environment).contains("alice")), "the originals were removed")
    }
}

@Suite("A migration killed mid-way leaves the destination as it was")
struct MigrationCrashTests {
    @Test("a process SIGKILLed at random moments of a 3,000-item migration leaves both Valets all-or-nothing")
    func killedMidway() throws {
        let directory = TemporaryDirectory()
        let path = directory.vaultPath("migration.keychain")
        let count = 3_000
        let environment = ["PATH": "/usr/bin:/bin", "HOME": directory.path]
        func start() throws -> (pid_t, Int32) {
            let (pid, out) = try Subprocess.launchReadingOutput(KeychainExecutable.reliabilityPath, ["worker", "migrate", path, "\(count)"], environment: environment)
            #expect(Subprocess.readOutput(out, until: "migrating"))
            return (pid, out)
        }
        func state() throws -> (source: Set<String>, destination: Set<String>, sample: String?) {
            let vault = try Vault(VaultConfiguration(location: VaultLocation(path: path), usesKernelKeyring: false))
            return try ValetStore.withStore(vault) {
                let source = Valet.valet(with: Identifier(nonEmpty: "MigrationSource")!, accessibility: .afterFirstUnlock)
                let destination = Valet.valet(with: Identifier(nonEmpty: "MigrationDestination")!, accessibility: .afterFirstUnlock)
                let moved = try destination.allKeys()
                let sample = moved.isEmpty ? nil : try destination.string(forKey: "key-\(count - 1)")
                if !moved.isEmpty { try destination.removeAllObjects() }  // the next worker refills the source
                return (try source.allKeys(), moved, sample)
            }
        }
        // One uninterrupted run, to know how long a migration takes here.
        let (firstPid, firstOut) = try start()
        let migrating = ContinuousClock.now
        #expect(Subprocess.wait(for: firstPid) == 0)
        close(firstOut)
        let duration = ContinuousClock.now - migrating
        #expect(try state().destination.count == count)
        var interrupted = 0, completed = 0
        for _ in 0..<6 {
            let (pid, out) = try start()
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.9) * seconds)
            kill(pid, SIGKILL)
            let status = Subprocess.wait(for: pid)
            close(out)
            let (source, destination, sample) = try state()
            if destination.isEmpty {
                #expect(source.count == count, "a killed migration left the source whole")
                interrupted += status == 128 + SIGKILL ? 1 : 0
            } else {
                #expect(destination.count == count && source.isEmpty, "a finished migration moved everything")
                #expect(sample == "value-\(count - 1)-" + String(repeating: "x", count: 64))
                completed += 1
            }
        }
        #expect(interrupted > 0, "at least one kill landed inside the migration (\(interrupted) interrupted, \(completed) completed, migration takes \(duration))")
    }
}
