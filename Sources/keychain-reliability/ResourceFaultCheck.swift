import Foundation
import KeychainCore
import KeychainTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Resource faults: a write that hits a file-size limit, and a write to a read-only vault,
/// fail with a clear error and leave every earlier item intact.
enum ResourceFaultCheck {
    static func run(_ env: CheckEnvironment) -> CheckResult {
        var result = CheckResult("resource faults (file-size limit, read-only vault)")
        // 1. File-size limit: a worker fills the vault under RLIMIT_FSIZE until a write fails.
        let path = env.directory("fsize") + "/fsize.keychain"
        let limit = 1 << 20
        guard let filled = try? env.run(["worker", "fsize", path, "\(limit)"]), filled.status == 0,
            let line = filled.output.split(separator: "\n").last(where: { $0.hasPrefix("F ") })
        else {
            result.fail("the file-size worker did not report")
            return result
        }
        let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
        let stored = Int(parts[1]) ?? -1
        let message = parts.count > 2 ? parts[2] : ""
        if !message.contains("nothing was written") { result.fail("the failing write's error was not clear: \(message)") }
        do {
            let vault = try Workers.openVault(path)
            try vault.verifyIntegrity()
            let items = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "fill"), returnData: true))
            let intact = items.filter { $0.value?.count == 4_096 }.count
            if intact != stored { result.fail("\(stored) writes were acknowledged before the limit, \(intact) found intact afterwards") }
            result.figure("file-size limit", "\(limit / 1024) KiB: \(stored) items acknowledged, all \(intact) intact, then \"\(message)\"")
        } catch {
            result.fail("the vault does not open after hitting the limit: \(error)")
        }
        // 2. Read-only: the vault's files made read-only for the user who owns them (the
        //    directory stays writable, so SQLite can still open its WAL for reading). Root
        //    ignores modes, so as root the check runs as the unprivileged probe user.
        let directory = env.directory("readonly")
        let location = VaultLocation(path: directory + "/ro.keychain")
        do {
            let vault = try Vault(VaultConfiguration(location: location, usesKernelKeyring: false))
            try vault.add(Item(.genericPassword, attributes: Attributes(service: "ro", account: "before"), value: SecretBytes(utf8: "kept")))
        } catch {
            result.fail("cannot prepare the read-only vault: \(error)")
            return result
        }
        if getuid() == 0 {
            guard let probe = getpwnam(OtherUsersCheck.user) else {
                result.skip("the read-only part runs as \(OtherUsersCheck.user), which the other-users check creates")
                return result
            }
            for path in [directory, location.path, location.keyFilePath] + location.companionPaths { chown(path, probe.pointee.pw_uid, probe.pointee.pw_gid) }
        }
        chmod(location.path, 0o400)
        chmod(location.keyFilePath, 0o400)
        let arguments = ["worker", "readonly", location.path]
        let outcome = getuid() == 0 ? try? env.runAs(user: OtherUsersCheck.user, arguments) : try? env.run(arguments)
        let text = outcome?.output.trimmingCharacters(in: .whitespacesAndNewlines) ?? "not run"
        if !text.hasPrefix("R kept") || !text.contains("read-only") {
            result.fail("read-only vault: \(text)")
        }
        chmod(location.path, 0o600)
        chmod(location.keyFilePath, 0o600)
        // SQLite's -wal and -shm, made by the probe user while it read, are given back too: the
        // vault refuses companions another user owns.
        if getuid() == 0 { for path in [directory, location.path, location.keyFilePath] + location.companionPaths { chown(path, 0, 0) } }
        let after = try? Workers.openVault(location.path).copyMatching(Query(.genericPassword, attributes: Attributes(service: "ro"), returnData: true))
        if after?.count != 1 || after?.first?.value.map({ String(decoding: $0.data, as: UTF8.self) }) != "kept" {
            result.fail("after the read-only episode the vault holds \(after?.count ?? -1) items, expected the 1 written before")
        }
        result.figure("read-only vault", text + "; the earlier item intact afterwards")
        return result
    }
}

extension Workers {
    /// Reads the item, then tries a write; says "R <value> | W <error>".
    static func readOnly(vaultPath: String) -> Int32 {
        do {
            let vault = try openVault(vaultPath)
            let value = try vault.copyMatching(Query(.genericPassword, attributes: Attributes(service: "ro", account: "before"), returnData: true)).first?.value
            let kept = value.map { String(decoding: $0.data, as: UTF8.self) } ?? "nothing"
            do {
                try vault.add(Item(.genericPassword, attributes: Attributes(service: "ro", account: "after"), value: SecretBytes(utf8: "new")))
                say("R \(kept) | W succeeded")
            } catch {
                say("R \(kept) | W \(error)")
            }
        } catch {
            say("open failed: \(error)")
        }
        return 0
    }
}
