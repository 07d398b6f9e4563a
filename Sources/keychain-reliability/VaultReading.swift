import Foundation
import KeychainCore

#if canImport(Glibc)
    import Glibc
#endif

/// What a vault file holds as the next process finds it: nothing, or its format, the passphrase
/// that opens it, and every item with its value; or why it does not open, or does not verify.
enum VaultReading: Equatable, CustomStringConvertible {
    case absent
    /// `keys`: a digest of the vault's header (its wrapped keys), when the reader was asked for it.
    case vault(format: Int, passphrase: String?, items: [String], keys: String = "")
    case unreadable(String)
    /// An archive `keychain export` wrote, opened, with every item it holds.
    case archive(items: [String])

    /// The format a vault is made in, and upgraded to, by the command under test.
    static let currentFormat = 4
    /// A new vault with a key file and nothing in it yet (created by a first write, which then adds).
    static let emptyVault = VaultReading.vault(format: currentFormat, passphrase: nil, items: [])

    var description: String {
        switch self {
        case .absent: "no vault"
        case .vault(let format, let passphrase, let items, let keys):
            "a format-\(format) vault \(passphrase.map { "opened by passphrase '\($0)'" } ?? "with a key file") holding \(items.count) item(s)"
                + (keys.isEmpty ? "" : " under the header \(keys)")
        case .unreadable(let why): "a file that does not open: \(why)"
        case .archive(let items): "an archive holding \(items.count) item(s)"
        }
    }

    /// The vault at `path` read by a new process that knows `passphrases` (each tried in turn)
    /// and no kernel-keyring cache (a power cut empties it): opened, unlocked, every item read
    /// with its value, then `verify` (SQLite's integrity check, the item ledger, each item).
    /// `withKeys` tells apart the keys it is under (for a rekey, which changes nothing else a
    /// reader sees).
    static func read(_ path: String, passphrases: [String], machine: MachineIdentity, withKeys: Bool = false) -> VaultReading {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .absent }
        do throws(StoreError) {
            let vault = try Vault(
                VaultConfiguration(
                    location: VaultLocation(path: path), idleTimeout: nil, scryptParameters: .minimum, usesKernelKeyring: false,
                    machineIdentity: machine, createIfMissing: false, syncsInBackground: false))
            // Before the unlock, which upgrades an older format.
            let format = vault.status().formatVersion
            var opened: String?
            if vault.hasPassphrase {
                for passphrase in passphrases {
                    do throws(StoreError) {
                        try vault.unlock(passphrase: SecretBytes(utf8: passphrase))
                        opened = passphrase
                        break
                    } catch .wrongPassphrase {
                        continue
                    }
                }
                guard opened != nil else { return .unreadable("none of the acknowledged passphrases opens it") }
            }
            var items: [String] = []
            do {
                // A value behind an access control would ask for a proof of presence: its
                // attributes are read, and `verify` checks its outer seal.
                for item in try vault.copyMatching(Query(limit: .all)) {
                    guard item.attributes.accessControl == nil else {
                        items.append(describe(item))
                        continue
                    }
                    var query = Query(identifying: item)
                    query.returnData = true
                    items += try vault.copyMatching(query).map(describe)
                }
                items.sort()
            } catch .itemNotFound {}
            let report = try vault.verify()
            guard report.isSound else {
                return .unreadable("verify: file \(report.integrity), ledger \(report.ledger), \(report.damaged.count) damaged item(s)")
            }
            let header = withKeys ? RawSQL.blobs(path, "SELECT value FROM meta WHERE name = 'header'").first ?? [] : []
            let keys = withKeys ? CrashStateFiles.sha256(header).prefix(8).map { String(format: "%02x", $0) }.joined() : ""
            return .vault(format: format, passphrase: opened, items: items, keys: keys)
        } catch {
            return .unreadable("\(error)")
        }
    }

    /// The archive at `path` as `keychain import` finds it: absent, or whole and opened by
    /// `passphrase` with every item it holds; a cut or damaged one is unreadable.
    static func readArchive(_ path: String, passphrase: String) -> VaultReading {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .absent }
        do throws(StoreError) {
            let bytes = try ItemArchive.read(file: path)
            guard ItemArchive.isArchive(bytes) else { return .unreadable("not an archive (\(bytes.count) bytes)") }
            return .archive(items: try ItemArchive.open(bytes, passphrase: SecretBytes(utf8: passphrase)).map(describe).sorted())
        } catch {
            return .unreadable("the archive does not open: \(error)")
        }
    }

    /// What `keychain recover` saves from a vault that does not read: how many items it copied
    /// into a new vault beside it and how many stayed behind, or why it could not.
    static func recovery(_ path: String, passphrases: [String], machine: MachineIdentity) -> String {
        do throws(StoreError) {
            let vault = try Vault(
                VaultConfiguration(
                    location: VaultLocation(path: path), idleTimeout: nil, scryptParameters: .minimum, usesKernelKeyring: false,
                    machineIdentity: machine, createIfMissing: false, syncsInBackground: false))
            var passphrase: SecretBytes?
            if vault.hasPassphrase {
                for candidate in passphrases where passphrase == nil {
                    if (try? vault.unlock(passphrase: SecretBytes(utf8: candidate))) != nil { passphrase = SecretBytes(utf8: candidate) }
                }
            }
            let (copied, left) = try vault.recover(to: path + ".recovered", passphrase: passphrase)
            return "recover saved \(copied) item(s), \(left) stayed behind"
        } catch {
            return "recover cannot open it: \(error)"
        }
    }

    /// An item's identity, accessibility, label, generic data and value, as one comparable line
    /// (a served item's record keeps its label and attributes in the label and generic data).
    private static func describe(_ item: Item) -> String {
        let a = item.attributes
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        let value = item.value.map { $0.withUnsafeBytes { hex(Array($0)) } } ?? "-"
        return [
            "\(item.itemClass)", a.accessGroup ?? "", a.service ?? "", a.account ?? "", a.server ?? "", "\(a.accessibility.map { "\($0)" } ?? "")",
            "\(a.synchronizable ?? false)", a.label ?? "", a.generic.map { hex(Array($0)) } ?? "", value,
        ].joined(separator: "|")
    }
}
