import Foundation
import KeychainCore
import KeychainTestSupport

/// One machine of the served-items sync check: a home of its own whose vault `keychain serve`
/// serves on the home's own session bus. Its commands start no sync agent, so that what sends
/// and receives is exactly what the check runs.
struct ServedMachine {
    let served: ServedVault
    static let environment = ["KEYCHAIN_SYNC_AGENT": "off"]

    init() throws { served = try ServedVault(serving: false) }

    /// `keychain arguments...` in this home; its output, or a failure saying why it failed.
    @discardableResult
    func ok(_ arguments: [String], input: String = "") throws -> String {
        let result = try KeychainExecutable.run(arguments, input: Data(input.utf8), environment: Self.environment, home: served.directory.path)
        guard result.status == 0 else {
            throw FileTrace.Failure(description: "keychain \(arguments.first ?? "") \(arguments.dropFirst().first ?? "") exited \(result.status): \(result.stderr)")
        }
        return result.output
    }

    func serve() throws {
        try served.startServing(environment: Self.environment)
        guard served.waitForProvider() else { throw FileTrace.Failure(description: "keychain serve did not start: \(served.serveErrors)") }
    }

    func secretTool(_ arguments: [String], input: String = "") throws -> CommandResult {
        try served.run("/usr/bin/secret-tool", arguments, input: input)
    }

    /// The ids of the items the `sync` collection lists (its `Items` property).
    func listed() throws -> Set<String> {
        let result = try served.run(
            "/usr/bin/dbus-send",
            [
                "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets/collection/sync",
                "org.freedesktop.DBus.Properties.Get", "string:org.freedesktop.Secret.Collection", "string:Items",
            ])
        guard result.status == 0 else { throw FileTrace.Failure(description: "reading the sync collection's Items failed: \(result.stderr)") }
        let prefix = "object path \"/org/freedesktop/secrets/collection/sync/"
        return Set(
            result.output.split(separator: "\n").compactMap { line in
                let text = line.trimmingCharacters(in: .whitespaces)
                return text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count).dropLast()) : nil
            })
    }

    /// What a search of the `sync` collection on `attributes` finds (`secret-tool search --all`):
    /// each item's id with its label and secret as the daemon serves them.
    func search(_ attributes: [String]) throws -> [String: (label: String?, secret: String?)] {
        let result = try secretTool(["search", "--all"] + attributes)
        // Nothing found: status 1 and nothing said.
        guard result.status == 0 || (result.output.isEmpty && result.stderr.isEmpty) else {
            throw FileTrace.Failure(description: "secret-tool search exited \(result.status): \(result.stderr.prefix(500))")
        }
        var found: [String: (label: String?, secret: String?)] = [:]
        var current: String?
        // Each item is a line with its path in brackets, then `name = value` lines (its
        // attributes go to standard error, apart: the label names the item instead).
        for line in result.output.split(separator: "\n") {
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = line.dropFirst().dropLast().split(separator: "/").last.map(String.init)
                if let current { found[current] = (nil, nil) }
                continue
            }
            guard let current, let equals = line.range(of: " = ") else { continue }
            let name = line[..<equals.lowerBound], value = String(line[equals.upperBound...])
            if name == "label" { found[current]?.label = value }
            if name == "secret" { found[current]?.secret = value }
        }
        return found
    }
}
