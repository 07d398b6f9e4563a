import Foundation
import KeychainCore
import KeychainTestSupport
import Testing

/// Switching between the other Secret Service providers, KeePassXC (its Secret Service
/// integration) and KWallet (kwalletd with its Secret Service API on), and the vault with
/// `keychain migrate --foreign`, both ways: real daemons on private buses, headless, and a mixed
/// set of items compared item by item through a client of their own.
@Suite(
    "switching between KeePassXC or KWallet and keychain serve",
    .enabled(if: ServedVault.unavailableReason == nil, "\(ServedVault.unavailableReason ?? "")"),
    .enabled(if: PythonClient.unavailableReason == nil, "\(PythonClient.unavailableReason ?? "")"))
struct ProviderMatrixTests {
    /// One item to store: label, attributes, secret bytes and content type.
    struct Item {
        let label: String
        let attributes: [String: String]
        let secret: [UInt8]
        let contentType: String

        var json: [String: Any] {
            ["label": label, "attributes": attributes, "secret": secret.map { String(format: "%02x", $0) }.joined(), "content_type": contentType]
        }
    }

    /// The default collection's items: text with unicode and spaces in attribute names and
    /// values, a binary secret, and two items of the same attributes.
    static let mixed = [
        Item(
            label: "Café ☕ login", attributes: ["service": "café au lait", "user name": "Zoë Ünicode ✓", "xdg:schema": "org.freedesktop.Secret.Generic"],
            secret: Array("pässwörd with spaces".utf8), contentType: "text/plain"),
        Item(label: "binary blob", attributes: ["kind": "binary blob", "place": "/home/a b/c"], secret: [0, 255, 16, 10, 128, 254], contentType: "application/octet-stream"),
        Item(label: "dup first", attributes: ["service": "dup", "user": "u"], secret: Array("first".utf8), contentType: "text/plain"),
        Item(label: "dup second", attributes: ["service": "dup", "user": "u"], secret: Array("second".utf8), contentType: "text/plain"),
    ]

    /// `provider_contents.py` against the bus at `bus`.
    static func client(_ bus: String, _ arguments: [String], input: String = "") throws -> CommandResult {
        try Subprocess.run(
            PythonClient.python, [PythonClient.scripts + "/provider_contents.py"] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": bus], input: Data(input.utf8))
    }

    static func fill(_ bus: String, _ collection: String, _ items: [Item]) throws {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: items.map(\.json)), as: UTF8.self)
        let filled = try client(bus, ["fill", collection], input: json)
        #expect(filled.status == 0, "\(filled.stderr)")
    }

    /// Every item of every unlocked collection, one sorted line each (collection, label,
    /// attributes but `ignoring`, secret, content type, and Created and Modified with `dates`).
    static func dump(_ bus: String, ignoring: [String] = [], dates: Bool = false) throws -> [String] {
        let dumped = try client(bus, ["dump"] + (dates ? ["--dates"] : []) + ignoring)
        #expect(dumped.status == 0, "\(dumped.stderr)")
        return dumped.output.split(separator: "\n").map(String.init)
    }

    /// What KeePassXC shows of each entry beyond what was stored (the entry's id, place,
    /// title and empty fields, and its record of the content type).
    static let keepassxcShown = ["Uuid", "Path", "Title", "UserName", "URL", "Notes", "FDO_SECRETS_CONTENT_TYPE"]

    /// No GLib warning or assertion reaches the user's terminal.
    static func quiet(_ result: CommandResult) -> Bool {
        !result.stderr.contains("GLib") && !result.stderr.contains("CRITICAL") && !result.stderr.contains("WARNING")
    }

    @Test(
        "KeePassXC: a mixed set (binary, unicode and spaces, duplicates by attributes, three databases, one locked) moves into the vault and back, item by item as it was: nothing lost, nothing doubled, no GLib warnings",
        .enabled(if: PrivateProvider.Kind.keepassxc.unavailableReason == nil, "\(PrivateProvider.Kind.keepassxc.unavailableReason ?? "")"))
    func keepassxcRoundTrip() throws {
        try Self.roundTrip(.keepassxc)
    }

    @Test(
        "KWallet: a mixed set (binary, unicode and spaces, duplicates by attributes, three wallets, one locked) moves into the vault and back, item by item as it was: nothing lost, nothing doubled, no GLib warnings",
        .enabled(if: PrivateProvider.Kind.kwallet.unavailableReason == nil, "\(PrivateProvider.Kind.kwallet.unavailableReason ?? "")"))
    func kwalletRoundTrip() throws {
        try Self.roundTrip(.kwallet)
    }

    /// The matrix for one provider: a mixed set in three collections, the third locked; into
    /// the vault (the locked one refused, then left behind), served by keychain serve as
    /// stored, back into the provider as it was, then the third opened and moved too.
    static func roundTrip(_ kind: PrivateProvider.Kind) throws {
        let provider = try PrivateProvider(kind, ["Passwords", "Work Keys", "Locked Box"])
        let served = try ServedVault(serving: false)
        let environment = served.environment.merging(["DBUS_SESSION_BUS_ADDRESS": provider.busAddress]) { $1 }
        let migrate = { (arguments: [String]) throws -> CommandResult in
            try Subprocess.run(KeychainExecutable.path, ["migrate", "--foreign"] + arguments, environment: environment)
        }
        try fill(provider.busAddress, "Passwords", mixed)
        try fill(
            provider.busAddress, "Work Keys",
            [Item(label: "VPN", attributes: ["service": "vpn.example.com", "user": "alice"], secret: Array("vpn-pw".utf8), contentType: "text/plain")])
        try fill(provider.busAddress, "Locked Box", [Item(label: "boxed", attributes: ["service": "box"], secret: Array("in the box".utf8), contentType: "text/plain")])
        #expect(try dump(provider.busAddress).count == 6)
        #expect(try client(provider.busAddress, ["lock", "Locked Box"]).status == 0)
        // KeePassXC's entry id is its own: a new entry has a new one.
        let before = try dump(provider.busAddress, ignoring: ["Uuid"])
        #expect(before.count == 5, "\(before)")
        // With their dates, which the move keeps (and the way back cannot: the provider sets its own).
        let stored = try dump(provider.busAddress, ignoring: keepassxcShown, dates: true)
        // Dates are in seconds: the move comes later than the stores by more than one.
        usleep(1_100_000)

        // A locked collection refuses the move, and says how this provider's are unlocked.
        let refused = try migrate(["--from", "secret-service", "--to", "vault"])
        #expect(refused.status == 3, "\(refused.stderr)")
        #expect(refused.stderr.contains("in \(kind)"), "\(refused.stderr)")
        #expect(quiet(refused), "\(refused.stderr)")
        #expect(try dump(provider.busAddress, ignoring: ["Uuid"]) == before)

        let moved = try migrate(["--from", "secret-service", "--to", "vault", "--skip-locked"])
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(moved.stderr.contains("5 added, 0 replaced"), "\(moved.stderr)")
        #expect(moved.stderr.contains("1 locked collection(s) stayed behind"), "\(moved.stderr)")
        #expect(moved.stderr.contains("1 item(s) have the attributes of another item of their collection ('dup "), "\(moved.stderr)")
        #expect(quiet(moved), "\(moved.stderr)")
        #expect(try dump(provider.busAddress).isEmpty)

        // keychain serve answers with the items as they were stored (KeePassXC's own
        // attributes stayed behind).
        try served.startServing()
        #expect(served.waitForProvider())
        #expect(try dump(served.busAddress, dates: true) == stored)
        served.stopServing()

        // And back: the provider shows every item as before, each once.
        let back = try migrate(["--from", "vault", "--to", "secret-service"])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(back.stderr.contains("5 added"), "\(back.stderr)")
        #expect(quiet(back), "\(back.stderr)")
        #expect(try dump(provider.busAddress, ignoring: ["Uuid"]) == before)

        // The locked collection moves on a second run with everything else, opened: KWallet's
        // by --unlock (the Secret Service's Unlock: kwalletd opens the wallet itself);
        // KeePassXC's, which --unlock refuses, in KeePassXC (which makes it the default alias's).
        let rest: CommandResult
        switch kind {
        case .keepassxc:
            let unopened = try migrate(["--from", "secret-service", "--to", "vault", "--unlock"])
            #expect(unopened.status == 3, "\(unopened.stderr)")
            #expect(unopened.stderr.contains("KeePassXC's locked collection(s) ('db3')"), "\(unopened.stderr)")
            let opened = try client(provider.busAddress, ["open-keepassxc", provider.databasePath(3)], input: PrivateProvider.password + "\n")
            #expect(opened.status == 0, "\(opened.stderr)")
            var visible = false
            for _ in 0..<50 where !visible {
                visible = try dump(provider.busAddress).contains { $0.contains("\"boxed\"") }
                if !visible { usleep(100_000) }
            }
            #expect(visible)
            rest = try migrate(["--from", "secret-service", "--to", "vault"])
        case .kwallet:
            rest = try migrate(["--from", "secret-service", "--to", "vault", "--unlock"])
            #expect(rest.stderr.contains("unlocked the Secret Service's collection 'Locked Box'"), "\(rest.stderr)")
        }
        #expect(rest.status == 0, "\(rest.stderr)")
        #expect(rest.stderr.contains("6 added, 0 replaced"), "\(rest.stderr)")
        #expect(quiet(rest), "\(rest.stderr)")
        #expect(try dump(provider.busAddress).isEmpty)
    }

    @Test(
        "an item KeePassXC does not keep as it was given (an attribute it refuses, Uuid or Path, of another provider's) stays in the vault: the move back fails naming it and the attribute, and leaves no entry in KeePassXC",
        .enabled(if: PrivateProvider.Kind.keepassxc.unavailableReason == nil, "\(PrivateProvider.Kind.keepassxc.unavailableReason ?? "")"),
        arguments: [["Uuid", "1234"], ["Path", "/srv/share"]])
    func itemNotKeptStaysInVault(refused: [String]) throws {
        let served = try ServedVault()
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=placed", "service", "placed"] + refused, input: "kept-safe").status == 0)
        #expect(try served.run("/usr/bin/secret-tool", ["store", "--label=plain", "service", "plain"], input: "plain-secret").status == 0)
        served.stopServing()
        let keepassxc = try PrivateProvider(.keepassxc, ["Passwords"])
        let back = try Subprocess.run(
            KeychainExecutable.path, ["migrate", "--foreign", "--from", "vault", "--to", "secret-service"],
            environment: served.environment.merging(["DBUS_SESSION_BUS_ADDRESS": keepassxc.busAddress]) { $1 })
        #expect(back.status != 0, "\(back.stderr)")
        #expect(back.stderr.contains("KeePassXC refuses the attribute(s) '\(refused[0])' of the item 'placed'"), "\(back.stderr)")
        #expect(back.stderr.contains("the vault is unchanged"), "\(back.stderr)")
        #expect(Self.quiet(back), "\(back.stderr)")
        #expect(try Self.dump(keepassxc.busAddress).isEmpty)
        try served.startServing()
        #expect(served.waitForProvider())
        #expect(try served.run("/usr/bin/secret-tool", ["lookup", "service", "placed"]).output == "kept-safe")
        #expect(try served.run("/usr/bin/secret-tool", ["lookup", "service", "plain"]).output == "plain-secret")
    }
}

/// What of KeePassXC's shown attributes comes across: what clients stored, and filled fields.
struct KeePassXCAttributesTests {
    @Test("KeePassXC's id, place, title, TOTP, content-type record and empty fields stay behind; filled fields and every other provider's attributes come across")
    func storedAttributes() {
        let shown = [
            "Uuid": "d54a4249322d408abe1079fe9eb79989", "Path": "/first", "Title": "first", "TOTP": "123456", "FDO_SECRETS_CONTENT_TYPE": "application/octet-stream",
            "UserName": "alice", "URL": "", "Notes": "", "service": "demo",
        ]
        #expect(SecretServiceProgram.keepassxc.storedAttributes(shown) == ["UserName": "alice", "service": "demo"])
        for program in SecretServiceProgram.allCases where program != .keepassxc {
            #expect(program.storedAttributes(shown) == shown)
            #expect(program.refusedAttributes.isEmpty)
        }
        #expect(SecretServiceProgram.keepassxc.refusedAttributes == ["Uuid", "Path", "TOTP"])
    }
}

/// `migrate --foreign` with no session bus to reach: its own one-line error, nothing of GLib's.
struct ForeignMoveWithoutBusTests {
    @Test(
        "with no session bus (none named, or a socket that is not there), migrate --foreign either way fails with status 4 and one line of its own: no GLib warning reaches the terminal"
    )
    func noBusNoGLibWarning() throws {
        let home = TemporaryDirectory()
        let base = [
            "PATH": "/usr/bin:/bin", "HOME": home.path, "XDG_DATA_HOME": home.path + "/data", "XDG_CONFIG_HOME": home.path + "/config",
            "XDG_RUNTIME_DIR": home.path, "KEYCHAIN_KERNEL_KEYRING": "off",
        ]
        for bus in [nil, "unix:path=\(home.path)/no-bus-here"] {
            for direction in [["--from", "secret-service", "--to", "vault"], ["--from", "vault", "--to", "secret-service"]] {
                let environment = bus.map { base.merging(["DBUS_SESSION_BUS_ADDRESS": $0]) { $1 } } ?? base
                let moved = try Subprocess.run(KeychainExecutable.path, ["migrate", "--foreign"] + direction, environment: environment)
                #expect(moved.status == 4, "\(moved.stderr)")
                #expect(moved.stderr.hasPrefix("keychain migrate: ") && moved.stderr.split(separator: "\n").count == 1, "\(moved.stderr)")
                #expect(ProviderMatrixTests.quiet(moved), "\(moved.stderr)")
            }
        }
    }
}
