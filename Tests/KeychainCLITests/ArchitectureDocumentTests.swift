import Foundation
import Testing

/// ARCHITECTURE.md stays a map of the code as it is: every type, member and file it names
/// exists, and the C targets are imported only where it says.
@Suite("ARCHITECTURE.md names what the code has")
struct ArchitectureDocumentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Swift sources of the package, path relative to the root and text.
    static let sources: [(path: String, text: String)] = {
        var found: [(String, String)] = []
        for folder in ["Sources", "Tests", "Fuzz"] {
            let base = root.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(atPath: base.path) else { continue }
            for case let relative as String in walker where relative.hasSuffix(".swift") {
                if let text = try? String(contentsOf: base.appendingPathComponent(relative), encoding: .utf8) { found.append((folder + "/" + relative, text)) }
            }
        }
        return found
    }()

    /// Names in the document that are not this package's Swift: D-Bus members, standard types,
    /// C and SQL words.
    static let foreign: Set<String> = [
        "OpenSession", "SearchItems", "GetSecret", "GetSecrets", "CreateItem", "ItemCreated", "ItemChanged", "ItemDeleted", "Unlock", "Lock",
        "Item", "Service", "Prompt", "Mutex", "NSLock", "DispatchSemaphore", "Sendable", "Foundation", "ARCHITECTURE", "README",
    ]

    static func document() throws -> String {
        try String(contentsOf: root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
    }

    /// The contents of every `code span` in `text`.
    static func codeSpans(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// Every name the sources declare, by kind: types (and what extensions extend), and members.
    static let declared: (types: Set<String>, members: Set<String>) = {
        var types: Set<String> = [], members: Set<String> = []
        for (_, text) in sources {
            for match in text.matches(of: /\b(struct|class|enum|protocol|typealias|extension|actor|func|var|let|case) ([A-Za-z_][A-Za-z0-9_]*)/) {
                if ["struct", "class", "enum", "protocol", "typealias", "extension", "actor"].contains(match.1) {
                    types.insert(String(match.2))
                } else {
                    members.insert(String(match.2))
                }
            }
        }
        return (types, members)
    }()

    @Test("every type it names is declared, with the member it names")
    func typesAndMembersExist() throws {
        let targets = Set(try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8).matches(of: /name: "([A-Za-z-]+)"/).map { String($0.1) })
        var missing: [String] = []
        for span in Self.codeSpans(try Self.document()) {
            // `Type`, `Type.member` or `Type.member(...)`: a name of this package's.
            guard !span.hasSuffix(".swift"), let match = span.wholeMatch(of: /([A-Z][A-Za-z0-9]*)(?:\.([A-Za-z][A-Za-z0-9]*))?(?:\(.*\))?/) else { continue }
            let type = String(match.1)
            if Self.foreign.contains(type) || targets.contains(type) || type.allSatisfy({ $0.isUppercase || $0.isNumber }) { continue }
            guard Self.declared.types.contains(type) else {
                missing.append(span)
                continue
            }
            if let member = match.2.map(String.init), member != "init",
                !Self.declared.members.contains(member) && !Self.declared.types.contains(member)
            {
                missing.append(span)
            }
        }
        #expect(missing.isEmpty, "ARCHITECTURE.md names what the sources do not declare: \(missing)")
    }

    @Test("every Swift file it names exists")
    func filesExist() throws {
        let names = Set(Self.sources.map { ($0.path as NSString).lastPathComponent })
        let paths = Self.sources.map(\.path)
        let named = try Self.document().matches(of: /[A-Za-z0-9_+\/-]+\.swift/).map { String($0.0) }
        let missing = named.filter { name in
            if FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(name).path) { return false }
            return name.contains("/") ? !paths.contains { $0.hasSuffix("/" + name) } : !names.contains(name)
        }
        #expect(missing.isEmpty, "ARCHITECTURE.md names files that are not there: \(missing)")
    }

    @Test("each C library is imported by the one part it names, and nothing else of the library modules")
    func cTargetsImportedWhereSaid() {
        // The library's own folders; the benchmark and the reliability suite reach C on purpose.
        let owners: [String: [String]] = [
            "CSQLite": ["Sources/KeychainCore/SQLite/"], "COpenSSL": ["Sources/KeychainCore/Crypto/"],
            "CKeyring": ["Sources/KeychainCore/KernelKeyring/"], "CSystem": ["Sources/KeychainSystem/"],
            "CCurl": ["Sources/KeychainCore/Sync/EtcdClient.swift"], "CSDBus": ["Sources/KeychainServe/"],
        ]
        var strays: [String] = []
        for (path, text) in Self.sources where path.hasPrefix("Sources/") && !path.hasPrefix("Sources/keychain-") {
            for (target, places) in owners where text.contains(try! Regex("^(?:internal |@_implementationOnly )?import \(target)$").anchorsMatchLineEndings()) {
                if !places.contains(where: { path.hasPrefix($0) }) { strays.append("\(path) imports \(target)") }
            }
        }
        #expect(strays.isEmpty, "\(strays)")
    }

    @Test("the system layer is shared within the package only: KeychainSystem declares nothing public and imports nothing of the package but CSystem")
    func systemLayerIsPackageOnly() {
        var strays: [String] = []
        for (path, text) in Self.sources where path.hasPrefix("Sources/KeychainSystem/") {
            for line in text.split(separator: "\n") {
                let code = line.drop { $0 == " " }
                if code.contains(#/^(?:@\w+ )*(?:public|open) /#) { strays.append("\(path): \(code)") }
                if let imported = code.firstMatch(of: /^(?:\w+ )?import (\w+)/)?.1, imported.hasPrefix("Keychain") || imported.hasPrefix("C") && imported != "CSystem" {
                    strays.append("\(path): \(code)")
                }
            }
        }
        #expect(strays.isEmpty, "\(strays)")
    }

    @Test("the C library's calls on files and descriptors are made in KeychainSystem, or in a file the document lists as still making them")
    func rawCallsOnlyWhereListed() throws {
        let document = try Self.document()
        guard let start = document.range(of: "Calls still made outside it") else {
            Issue.record("ARCHITECTURE.md no longer says which calls are still made outside the system layer")
            return
        }
        let paragraph = String(document[start.lowerBound...]).components(separatedBy: "\n\n")[0]
        let listed = Set(Self.codeSpans(paragraph).filter { $0.first?.isUppercase == true })
        // The calls that have no namesake among the package's own functions (`open`, `read` and
        // `write` do, so only their `Glibc.`-qualified form is recognized).
        let call =
            /(?:^|[^.\w])(?:fcntl|isatty|ttyname|ttyname_r|dup|dup2|pipe|fstat|lstat|fsync|fchmod|ftruncate|access|signal|sigaction|tcgetattr|tcsetattr|tcflush|unlink|rename|mkdir|opendir|readdir|readlink|realpath|Glibc\.(?:open|close|read|write|stat|poll|kill))\(/
        var strays: [String] = []
        for (path, text) in Self.sources where path.hasPrefix("Sources/") && !path.hasPrefix("Sources/keychain-") && !path.hasPrefix("Sources/KeychainSystem/") {
            // Listed by its type, or (one file of a type's several) by its file's name.
            let file = (path as NSString).lastPathComponent
            let owner = String((file as NSString).deletingPathExtension.split(separator: "+")[0])
            if listed.contains(owner) || listed.contains(file) { continue }
            for line in text.split(separator: "\n") {
                let code = line.drop { $0 == " " }
                if code.hasPrefix("//") || code.contains("func ") { continue }
                if code.contains(call) { strays.append("\(path): \(code)") }
            }
        }
        #expect(strays.isEmpty, "C library calls outside KeychainSystem that ARCHITECTURE.md does not list: \(strays)")
    }

    @Test("the process environment has one writer, which names libsecret's provider only while it connects: no other code changes what every thread reads")
    func oneWriterOfTheEnvironment() {
        let write = /(?:^|[^.\w])(?:setenv|unsetenv|putenv|clearenv)\(/
        var writers: [String] = []
        for (path, text) in Self.sources where path.hasPrefix("Sources/") && !path.hasPrefix("Sources/keychain-") {
            for line in text.split(separator: "\n") where line.contains(write) && !line.drop(while: { $0 == " " }).hasPrefix("//") {
                writers.append("\(path): \(line.drop(while: { $0 == " " }))")
            }
        }
        #expect(writers.allSatisfy { $0.hasPrefix("Sources/KeychainCore/SecretService/LibSecretBusName.swift:") }, "\(writers)")
    }

    @Test("every lock the library, the daemon and the command declare is in its lock order, by its name or its owner's")
    func everyLockIsListed() throws {
        let document = try Self.document()
        var unlisted: [String] = []
        for (path, text) in Self.sources where path.hasPrefix("Sources/") && !path.hasPrefix("Sources/keychain-") {
            // The type a file is about: its name before any `+`.
            let owner = String(((path as NSString).lastPathComponent as NSString).deletingPathExtension.split(separator: "+")[0])
            for match in text.matches(of: /(?:let|var) ([A-Za-z]+)(?:: (?:Mutex|Condition)<[^=\n]*>| = (?:Mutex|Condition|NSLock)\b)/) {
                let name = String(match.1)
                if !document.contains("`\(owner)") && !document.contains(name) { unlisted.append("\(path): \(name)") }
            }
        }
        #expect(unlisted.isEmpty, "locks ARCHITECTURE.md does not place in its order: \(unlisted)")
    }
}
