import Foundation
import KeychainCore

/// One machine of a served-items sync test or check: a home of its own whose vault
/// `keychain serve` serves on the home's own session bus. Its commands start no sync agent, so
/// that what sends and receives is exactly what the test runs.
public struct ServedMachine {
    public let served: ServedVault
    public static let environment = ["KEYCHAIN_SYNC_AGENT": "off"]

    /// Why a step failed, as the command or the bus said it.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public init() throws { served = try ServedVault(serving: false) }

    /// `keychain arguments...` in this home; its output, or a failure saying why it failed.
    @discardableResult
    public func ok(_ arguments: [String], input: String = "") throws -> String {
        let result = try KeychainExecutable.run(arguments, input: Data(input.utf8), environment: Self.environment, home: served.directory.path)
        guard result.status == 0 else {
            throw Failure(description: "keychain \(arguments.first ?? "") \(arguments.dropFirst().first ?? "") exited \(result.status): \(result.stderr)")
        }
        return result.output
    }

    public func serve() throws {
        try served.startServing(environment: Self.environment)
        guard served.waitForProvider() else { throw Failure(description: "keychain serve did not start: \(served.serveErrors)") }
    }

    public func secretTool(_ arguments: [String], input: String = "") throws -> CommandResult {
        try served.run("/usr/bin/secret-tool", arguments, input: input)
    }

    /// The ids of the items a collection lists (its `Items` property, read with dbus-send).
    public func items(of collection: String) throws -> [String] {
        let result = try served.run(
            "/usr/bin/dbus-send", SecretServiceProperty.get("Items", of: "org.freedesktop.Secret.Collection", at: "/org/freedesktop/secrets/collection/\(collection)"))
        guard result.status == 0 else { throw Failure(description: "reading the Items of \(collection) failed: \(result.stderr)") }
        let prefix = "object path \"/org/freedesktop/secrets/collection/\(collection)/"
        return result.output.split(separator: "\n").compactMap { line in
            let text = line.trimmingCharacters(in: .whitespaces)
            guard text.hasPrefix(prefix) else { return nil }
            return String(text.dropFirst(prefix.count).dropLast())
        }.sorted()
    }

    /// The secret `secret-tool lookup` prints, or nil when it finds none.
    public func lookup(_ attributes: [String]) throws -> String? {
        let result = try secretTool(["lookup"] + attributes)
        return result.status == 0 ? result.output : nil
    }

    /// What a search of the `sync` collection on `attributes` finds (`secret-tool search --all`):
    /// each item's id with its label and secret as the daemon serves them.
    public func search(_ attributes: [String]) throws -> [String: (label: String?, secret: String?)] {
        let result = try secretTool(["search", "--all"] + attributes)
        // Nothing found: status 1 and nothing said.
        guard result.status == 0 || (result.output.isEmpty && result.stderr.isEmpty) else {
            throw Failure(description: "secret-tool search exited \(result.status): \(result.stderr.prefix(500))")
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
