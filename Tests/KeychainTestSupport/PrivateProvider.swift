import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// KeePassXC or KWallet as the Secret Service on a private session bus of a test's own
/// (scripts/keepassxc.sh, scripts/kwallet.sh): one database or wallet per label, the first the
/// default alias's, every one unlocked, headless (Qt's offscreen platform: no X server). Stops
/// exactly the processes it started.
public final class PrivateProvider: Sendable {
    /// Which provider, and what it needs.
    public enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        case keepassxc = "KeePassXC"
        case kwallet = "KWallet"

        public var description: String { rawValue }

        var script: String {
            URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../../scripts/\(self == .keepassxc ? "keepassxc" : "kwallet").sh").standardized.path
        }

        /// Why it cannot be started here, or nil.
        public var unavailableReason: String? {
            let tools = ["dbus-daemon", "dbus-send"] + (self == .keepassxc ? ["keepassxc", "keepassxc-cli"] : ["kwalletd5", "python3"])
            for tool in tools where !FileManager.default.isExecutableFile(atPath: "/usr/bin/" + tool) {
                return "\(tool) is not installed (apt-get install dbus \(self == .keepassxc ? "keepassxc" : "libkf5wallet-bin libqca-qt5-2-plugins python3"))"
            }
            // kwalletd answers the Secret Service's dh-ietf1024 sessions (libsecret's) through QCA's OpenSSL plugin.
            if self == .kwallet,
                (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib"))?.contains(where: {
                    FileManager.default.fileExists(atPath: "/usr/lib/\($0)/qca-qt5/crypto/libqca-ossl.so")
                }) != true
            {
                return "QCA's OpenSSL plugin is not installed (apt-get install libqca-qt5-2-plugins): kwalletd cannot open a dh-ietf1024 session"
            }
            return nil
        }
    }

    public let kind: Kind
    /// The folder the script keeps everything in (databases, wallets, logs).
    public let directory: String
    public let busAddress: String
    /// What opens every KeePassXC database (KWallet's wallets have an empty password).
    public static let password = "provider-test-password"
    /// Keeps the temporary folder (removed after `stop`).
    private let holder: TemporaryDirectory

    /// Starts the provider with one database or wallet per label.
    public init(_ kind: Kind, _ labels: [String]) throws {
        let holder = TemporaryDirectory()
        // The script makes the folder it is given; this one only names a place for it.
        let place = holder.path + "/provider"
        let started = try Subprocess.run(
            "/bin/bash", [kind.script, "start", place] + labels,
            environment: ["PATH": "/usr/bin:/bin", "KEEPASSXC_PASSWORD": Self.password, "TMPDIR": holder.path])
        var values: [String: String] = [:]
        for line in started.output.split(separator: "\n") where line.hasPrefix("export ") {
            let pair = line.dropFirst(7).split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            values[String(pair[0])] = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
        guard started.status == 0, let bus = values["DBUS_SESSION_BUS_ADDRESS"] else {
            throw ProviderDidNotStart(kind: kind, output: started.stderr)
        }
        self.kind = kind
        self.holder = holder
        directory = place
        busAddress = bus
    }

    deinit { stop() }

    public func stop() {
        _ = try? Subprocess.run("/bin/bash", [kind.script, "stop", directory], environment: ["PATH": "/usr/bin:/bin"])
    }

    /// The file of KeePassXC's database of the `index`th label (from 1).
    public func databasePath(_ index: Int) -> String { directory + "/databases/db\(index).kdbx" }
}

/// The script's complaint when the provider did not come up.
public struct ProviderDidNotStart: Error, CustomStringConvertible {
    public let kind: PrivateProvider.Kind
    public let output: String
    public var description: String { "\(kind.script) did not start \(kind): \(output)" }
}
