import Foundation
import KeychainTestSupport

/// One "machine" of a sync test: its own home (and so its own vault), its own processes of
/// the built `keychain`. Its commands start no sync agent unless `agent` says so: most tests
/// sync step by step (`sync run --once`) to see what each round does.
struct Machine {
    let name: String
    let home = TemporaryDirectory()
    let cluster: EtcdCluster
    var environment: [String: String]

    init(_ name: String, _ cluster: EtcdCluster, agent: [String: String]? = nil) {
        self.name = name
        self.cluster = cluster
        environment = agent ?? ["KEYCHAIN_SYNC_AGENT": "off"]
    }

    @discardableResult
    func keychain(_ arguments: [String], input: String = "") throws -> CommandResult {
        try KeychainExecutable.run(arguments, input: Data(input.utf8), environment: environment, home: home.path)
    }

    /// The vault's path (the default under the machine's home).
    var vaultPath: String { home.path + "/data/keychain/default.keychain" }

    /// Runs `arguments` and expects success; returns standard output.
    @discardableResult
    func ok(_ arguments: [String], input: String = "") throws -> String {
        let result = try keychain(arguments, input: input)
        guard result.status == 0 else { throw Failure("\(name): keychain \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)") }
        return result.output
    }

    func initialize() throws { try ok(["sync", "init", "--endpoints", cluster.endpoints, "--name", name]) }
    func invite() throws -> String { try ok(["sync", "invite"]).trimmingCharacters(in: .whitespacesAndNewlines) }
    func join(_ code: String) throws { try ok(["sync", "join", "--endpoints", cluster.endpoints, "--name", name], input: code + "\n") }
    func syncOnce() throws -> CommandResult { try keychain(["sync", "run", "--once", "--json"]) }
    func round() throws {
        let result = try syncOnce()
        guard result.status == 0 else { throw Failure("\(name): sync run --once exited \(result.status): \(result.stderr)") }
    }

    /// An iCloud Valet's key (`Valet.iCloudValet(with: Identifier(nonEmpty: "Shared"), ...)`).
    func setCloud(_ key: String, _ value: String, valet: String = "Shared") throws { try ok(["set", "-i", valet, "--icloud", key], input: value) }
    func getCloud(_ key: String, valet: String = "Shared") throws -> String? {
        let result = try keychain(["get", "-i", valet, "--icloud", key])
        return result.status == 0 ? result.output.trimmingCharacters(in: .newlines) : nil
    }

    /// What `sync status --json` says, as a dictionary.
    func status() throws -> [String: Any] {
        let text = try ok(["sync", "status", "--json"])
        return (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A group of machines enrolled in one sync group on `cluster`: the first initialises it,
/// each other joins with an invitation from the first.
func group(_ names: [String], on cluster: EtcdCluster) throws -> [Machine] {
    let machines = names.map { Machine($0, cluster) }
    try machines[0].initialize()
    for machine in machines.dropFirst() { try machine.join(try machines[0].invite()) }
    return machines
}
