import Foundation
import KeychainCore
import KeychainTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Other users: an unprivileged user cannot read another user's vault, key file or
/// kernel-keyring cache; and the vault refuses to open once its files are group- or
/// world-readable. Creating the user needs root (CI runs as root).
enum OtherUsersCheck {
    static let user = "keychain-probe"

    static func run(_ env: CheckEnvironment) -> CheckResult {
        var result = CheckResult("other users")
        guard getuid() == 0 else {
            result.skip("needs root to create an unprivileged user (CI runs as root)")
            return result
        }
        if getpwnam(user) == nil {
            let made = try? Subprocess.run("/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user], environment: env.workerEnvironment)
            guard made?.status == 0, getpwnam(user) != nil else {
                result.fail("useradd failed: \(made?.stderr ?? "not run")")
                return result
            }
        }
        // The owner's vault, with a passphrase, unlocked so that its afterFirstUnlock keys sit
        // in the owner's kernel keyring. Its directory is opened to everyone on purpose, so
        // that only the files' own modes stand between the other user and them.
        let directory = env.directory("other-users")
        chmod(directory, 0o711)
        let location = VaultLocation(path: directory + "/owner.keychain")
        // A second vault without a passphrase: its key file is the other thing to protect.
        let keyed = VaultLocation(path: directory + "/keyed.keychain")
        do {
            let vault = try Vault(VaultConfiguration(location: keyed, usesKernelKeyring: false))
            try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: SecretBytes(utf8: "keyed")))
        } catch {
            result.fail("cannot prepare the key-file vault: \(error)")
            return result
        }
        let keysBefore = Set(cacheKeySerials())
        let secretValue = "other-users-\(UUID().uuidString)"
        do {
            let vault = try Vault(VaultConfiguration(location: location, scryptParameters: .minimum, usesKernelKeyring: true))
            try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a", accessibility: .afterFirstUnlock), value: SecretBytes(utf8: secretValue)))
            try vault.changePassphrase(from: nil, to: SecretBytes(utf8: "owner passphrase"))
            try vault.unlock(forUser: SecretBytes(utf8: "owner passphrase"))
            guard case .available = vault.status().kernelKeyring else {
                result.fail("the kernel keyring is unavailable here: \(vault.status().kernelKeyring)")
                return result
            }
            _ = try vault.copyMatching(Query(.genericPassword, returnData: true))
        } catch {
            result.fail("cannot prepare the owner's vault: \(error)")
            return result
        }
        var denied = 0
        let files = [location.path, location.path + "-wal", keyed.path, keyed.keyFilePath].filter { FileManager.default.fileExists(atPath: $0) }
        for path in files {
            let probe = try? env.runAs(user: user, ["probe-read", path])
            if probe?.output.hasPrefix("denied") == true { denied += 1 } else { result.fail("\(user) could read \(path): \(probe?.output ?? "probe did not run")") }
        }
        let opened = try? env.runAs(user: user, ["probe-vault", keyed.path])
        if opened?.output.hasPrefix("refused") != true || opened?.output.contains("keyed") == true {
            result.fail("\(user) could open the owner's key-file vault: \(opened?.output ?? "probe did not run")")
        }
        // The cache in the owner's user keyring, found through /proc/keys (root sees its own keys).
        let cached = cacheKeySerials().filter { !keysBefore.contains($0) }
        if cached.isEmpty { result.fail("no kernel-keyring cache entry to probe") }
        var keyDenied = 0
        for serial in cached {
            let probe = try? env.runAs(user: user, ["probe-key", "\(Int32(serial, radix: 16) ?? -1)"])
            if probe?.output.hasPrefix("denied") == true { keyDenied += 1 } else { result.fail("\(user) could read kernel key \(serial): \(probe?.output ?? "probe did not run")") }
        }
        // Opened-up modes: the owner's own process refuses to use the vault.
        var refusedModes = 0
        for (path, mode) in [(keyed.path, mode_t(0o640)), (keyed.path, mode_t(0o604)), (keyed.keyFilePath, mode_t(0o644))] {
            chmod(path, mode)
            let probe = try? env.run(["probe-vault", keyed.path])
            if probe?.output.hasPrefix("refused") == true && probe?.output.contains("readable or writable by other users") == true {
                refusedModes += 1
            } else {
                result.fail("the vault opened with \(path) at mode \(String(mode, radix: 8)): \(probe?.output ?? "")")
            }
            chmod(path, 0o600)
        }
        // Leave nothing in root's keyring.
        if let vault = try? Vault(VaultConfiguration(location: location, usesKernelKeyring: true, createIfMissing: false)) { vault.forgetCachedKeys() }
        result.figure("files the other user could not read", "\(denied) of \(files.count) (\(files.map { ($0 as NSString).lastPathComponent }.joined(separator: ", ")))")
        result.figure("other user opening the key-file vault", opened?.output.trimmingCharacters(in: .whitespacesAndNewlines) ?? "not run")
        result.figure("kernel-keyring cache entries the other user could not read", keyDenied)
        result.figure("opened-up modes refused by the owner's own process", "\(refusedModes) of 3 (0640, 0604 on the vault; 0644 on the key file)")
        return result
    }

    /// The serials (hex) of the vault caches in the kernel keyrings this process can see.
    static func cacheKeySerials() -> [String] {
        // Read to the end: /proc files report a size of 0, and a sized read stops early.
        let keys = String(decoding: FileHandle(forReadingAtPath: "/proc/keys")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        return keys.split(separator: "\n").filter { $0.contains("swift-keychain:v1:") }.compactMap { $0.split(separator: " ").first.map(String.init) }
    }
}
