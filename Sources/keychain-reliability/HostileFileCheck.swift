import Foundation
import KeychainCore
import KeychainTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Hostile files: seeded trials of what someone who can edit the vault's directory or file does
/// on purpose (a planted trigger or view, a scope digest copied from another service, rows, an
/// attributes blob or the whole file put back from an older copy of the same vault, a deleted
/// row, the vault moved or emptied beside its key, a symbolic link, another user's file), each
/// after a program's own writes and followed by the reads and writes a program would do. No
/// wrong value (an older one included) may be served, nothing may hang or crash, and the key
/// file is never lost.
///
/// With the kernel keyring, also keys planted in its cache and a swapped presence public key
/// (``HostileKeyTrials``).
enum HostileFileCheck {
    enum Edit: CaseIterable {
        case triggerIgnoringUpdates, triggerIgnoringDeletes, triggerCopyingInserts, viewInPlaceOfItems, extraIndex
        case scopeCopied, vaultMoved, vaultEmptied, vaultSymlinked, keySymlinked, foreignOwner
        case olderRowRestored, rowDeleted, deletedRowRestored, olderAttributesRestored, wholeFileRolledBack
        case plantedCache, swappedPresenceKey
        /// The scope index rebuilt without a row, with rows swapped between scopes, or with a row
        /// under another's scope (``ScopeIndexEdit``): quick_check and the schema check pass.
        case scopeIndexPartial, scopeIndexSwapped, scopeIndexPointingElsewhere

        /// Whether the edit needs the kernel keyring's memory of the newest generation.
        var usesKernelKeyring: Bool { self == .wholeFileRolledBack }
    }

    static let services = ["alpha", "bravo", "charlie"]

    static func run(_ env: CheckEnvironment, trials: Int) -> CheckResult {
        var result = CheckResult(
            "hostile files (planted schema, moved scopes, older rows and files, deleted rows, moved or linked files, other owners, planted cache keys, swapped presence keys)")
        let base = env.directory("hostile")
        mkdir(base + "/template", 0o700)
        let template = VaultLocation(path: base + "/template/v.keychain")
        var expected: [String: String] = [:]
        var accounts: [String] = []
        do {
            let vault = try Vault(VaultConfiguration(location: template, usesKernelKeyring: false))
            var operations: [WriteOperation] = []
            for service in services {
                for index in 0..<4 {
                    let account = "\(service)-\(index)"
                    expected[account] = "value-\(account)"
                    accounts.append(account)
                    operations.append(.add(Item(.genericPassword, attributes: Attributes(service: service, account: account), value: SecretBytes(utf8: expected[account]!))))
                }
            }
            try vault.write(operations)
        } catch {
            result.fail("cannot build the template vault: \(error)")
            return result
        }
        let bytes = [UInt8](FileManager.default.contents(atPath: template.path) ?? Data())
        let key = [UInt8](FileManager.default.contents(atPath: template.keyFilePath) ?? Data())
        var random = SeededRandom(seed: env.seed &+ 17)
        var counts: [String: Int] = [:]
        var refused = 0, correct = 0, wrong = 0, keysLost = 0, listings = 0, wrongListings = 0
        let watchdog = Watchdog(limit: 30)
        let trialDirectory = base + "/trial"
        let keyringWorks = (try? Vault(VaultConfiguration(location: template, usesKernelKeyring: true)).status().kernelKeyring) == .available
        for trial in 0..<trials {
            var edit = Edit.allCases[random.next(below: Edit.allCases.count)]
            if edit == .foreignOwner && geteuid() != 0 { edit = .vaultSymlinked }
            if [.wholeFileRolledBack, .plantedCache, .swappedPresenceKey].contains(edit) && !keyringWorks { edit = .olderRowRestored }
            counts["\(edit)", default: 0] += 1
            _ = try? FileManager.default.removeItem(atPath: trialDirectory)
            mkdir(trialDirectory, 0o700)
            if edit == .plantedCache || edit == .swappedPresenceKey {
                var outcome = HostileKeyTrials.Outcome()
                watchdog.start("trial \(trial) (\(edit))")
                HostileKeyTrials.run(edit == .plantedCache ? .plantedCache : .swappedPresenceKey, in: trialDirectory, trial: trial, &random, &outcome)
                watchdog.stop()
                correct += outcome.correct
                wrong += outcome.wrong
                if outcome.refused > 0 { refused += 1 }
                for failure in outcome.failures { result.fail(failure) }
                continue
            }
            let location = VaultLocation(path: trialDirectory + "/v.keychain")
            CorruptionCheck.write(bytes, to: location.path, mode: 0o600)
            CorruptionCheck.write(key, to: location.keyFilePath, mode: 0o600)
            // As old as a real vault's key file: a key file seconds old is taken for another
            // process creating the vault, and waited for.
            var past = [timeval(tv_sec: time(nil) - 3_600, tv_usec: 0), timeval(tv_sec: time(nil) - 3_600, tv_usec: 0)]
            utimes(location.keyFilePath, &past)
            let configuration = VaultConfiguration(location: location, usesKernelKeyring: edit.usesKernelKeyring)
            // The program's own writes first: the template is now an older copy of this vault.
            var expected = expected
            let changed = (0..<3).map { _ in random.next(below: accounts.count) }
            let removed = random.next(below: accounts.count)
            do {
                let vault = try Vault(configuration)
                for index in changed {
                    let account = accounts[index]
                    expected[account] = "newer-\(account)"
                    try vault.upsert(
                        Item(
                            .genericPassword, attributes: Attributes(service: String(account.split(separator: "-")[0]), account: account),
                            value: SecretBytes(utf8: expected[account]!)))
                }
                let account = accounts[removed]
                expected[account] = nil
                try vault.delete(Query(.genericPassword, attributes: Attributes(service: String(account.split(separator: "-")[0]), account: account)))
            } catch {
                result.fail("trial \(trial): the program's own writes failed: \(error)")
                continue
            }
            apply(edit, to: location, older: template.path, changedRow: Int64(changed[0] + 1), removedRow: Int64(removed + 1), &random)
            watchdog.start("trial \(trial) (\(edit))")
            defer {
                watchdog.stop()
                // The next trial starts from the same older copy: put back the way an owner
                // would, with a restore, which drops the boot's record of newer generations.
                if edit.usesKernelKeyring {
                    let aside = VaultLocation(path: trialDirectory + "/aside.keychain")
                    rename(location.path, aside.path)
                    rename(location.keyFilePath, aside.keyFilePath)
                    for suffix in ["-wal", "-shm"] { unlink(location.path + suffix) }
                    do { try Vault(configuration).restore(from: aside.path) } catch { result.fail("trial \(trial): restoring the older copy failed: \(error)") }
                }
            }

            // What a program does next: read every item, list each service by its scope (as
            // Valet's allKeys does), update one, clear one service.
            let target = services[random.next(below: services.count)]
            do {
                let vault = try Vault(configuration)
                let unreadable = edit == .olderAttributesRestored && changed[0] != removed ? accounts[changed[0]] : nil
                for service in services {
                    guard let listed = try? vault.copyMatching(Query(.genericPassword, attributes: scope(service))) else { continue }
                    listings += 1
                    let want = Set(expected.keys.filter { $0.hasPrefix(service + "-") && $0 != unreadable })
                    let got = Set(listed.compactMap(\.attributes.account))
                    // A row's scope column set to another scope's digest: the ledger's scope
                    // shards (vault format 4) refuse both scopes' listings.
                    if got != want {
                        wrongListings += 1
                        result.fail("trial \(trial) (\(edit)): the listing of \(service) by its scope was short or wrong")
                    }
                }
                for account in accounts {
                    let found = try? vault.copyMatching(
                        Query(
                            .genericPassword, attributes: Attributes(service: String(account.split(separator: "-")[0]), account: account),
                            limit: .one, returnData: true)
                    ).first?.value?.string
                    if let found {
                        if found == expected[account] { correct += 1 } else { wrong += 1; result.fail("trial \(trial) (\(edit)): \(account) read a wrong or older value") }
                    }
                }
                try vault.upsert(Item(.genericPassword, attributes: Attributes(service: target, account: "\(target)-0"), value: SecretBytes(utf8: "updated")))
                try vault.delete(Query(.genericPassword, attributes: scope(target)))
                // Whatever else is left must be what was written, and no other service's item may be gone.
                let left = (try? vault.copyMatching(Query(.genericPassword, returnData: true))) ?? []
                for item in left where item.value?.string != expected[item.attributes.account ?? ""] {
                    wrong += 1
                    result.fail("trial \(trial) (\(edit)): a listing showed a wrong value")
                }
                let others = expected.keys.filter { !$0.hasPrefix(target + "-") }
                let present = Set(left.compactMap(\.attributes.account))
                // The row whose attributes came from an older copy no longer opens, so it is
                // not listed; it must still be there.
                if let unreadable, RawSQL.blobs(location.path, "SELECT identity FROM items WHERE id = \(changed[0] + 1)").count != 1 {
                    wrong += 1
                    result.fail("trial \(trial) (\(edit)): the row that no longer opens, \(unreadable), was removed")
                }
                for account in others where !present.contains(account) && account != unreadable {
                    wrong += 1
                    result.fail("trial \(trial) (\(edit)): clearing \(target) removed \(account)")
                }
            } catch {
                refused += 1
            }
            let keyNow = [UInt8](FileManager.default.contents(atPath: location.keyFilePath) ?? Data())
            if edit != .keySymlinked && keyNow != key {
                keysLost += 1
                result.fail("trial \(trial) (\(edit)): the key file changed or vanished")
            }
        }
        result.figure("trials", trials)
        result.figure("by kind", counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        result.figure("trials refused with a clear error", refused)
        result.figure("reads correct / wrong values served", "\(correct) / \(wrong)")
        result.figure("listings by scope served / wrong or short", "\(listings) / \(wrongListings)")
        result.figure("key files lost", keysLost)
        result.figure("crashes, hangs", "0, 0 (the program would have stopped)")
        return result
    }

    /// A service's scope as a Valet addresses it (access group and synchronizable named), so
    /// that a listing or a clear reads through the scope index.
    static func scope(_ service: String) -> Attributes {
        Attributes(service: service, accessGroup: "", synchronizable: false)
    }

    /// Applies `edit`; `older` is an older copy of the same vault (rows 1-12, one per account),
    /// `changedRow` a row the program rewrote since, `removedRow` one it deleted.
    static func apply(_ edit: Edit, to location: VaultLocation, older: String, changedRow: Int64, removedRow: Int64, _ random: inout SeededRandom) {
        let path = location.path
        let attach = "ATTACH '\(older)' AS old; "
        switch edit {
        case .olderRowRestored: _ = RawSQL.exec(path, attach + "INSERT OR REPLACE INTO items SELECT * FROM old.items WHERE id = \(changedRow)")
        case .rowDeleted: _ = RawSQL.exec(path, "DELETE FROM items WHERE id = \(1 + random.next(below: 12))")
        case .deletedRowRestored: _ = RawSQL.exec(path, attach + "INSERT OR REPLACE INTO items SELECT * FROM old.items WHERE id = \(removedRow)")
        case .olderAttributesRestored:
            _ = RawSQL.exec(path, attach + "UPDATE items SET attributes = (SELECT attributes FROM old.items WHERE id = \(changedRow)) WHERE id = \(changedRow)")
        case .wholeFileRolledBack:
            for suffix in ["-wal", "-shm"] { unlink(path + suffix) }
            CorruptionCheck.write([UInt8](FileManager.default.contents(atPath: older) ?? Data()), to: path, mode: 0o600)
        case .triggerIgnoringUpdates: _ = RawSQL.exec(path, "CREATE TRIGGER keep BEFORE UPDATE ON items BEGIN SELECT RAISE(IGNORE); END")
        case .triggerIgnoringDeletes: _ = RawSQL.exec(path, "CREATE TRIGGER stay BEFORE DELETE ON items BEGIN SELECT RAISE(IGNORE); END")
        case .triggerCopyingInserts:
            _ = RawSQL.exec(path, "CREATE TABLE loot(x BLOB); CREATE TRIGGER copy AFTER INSERT ON items BEGIN INSERT INTO loot VALUES(new.value); END")
        case .viewInPlaceOfItems:
            _ = RawSQL.exec(path, "ALTER TABLE items RENAME TO old_items; CREATE VIEW items AS SELECT * FROM old_items")
        case .extraIndex: _ = RawSQL.exec(path, "CREATE INDEX extra ON items(value)")
        case .scopeCopied:
            let from = 1 + random.next(below: 12), to = 1 + random.next(below: 12)
            _ = RawSQL.exec(path, "UPDATE items SET scope = (SELECT scope FROM items WHERE id = \(from)) WHERE id = \(to)")
        case .vaultMoved: rename(path, path + ".aside")
        case .vaultEmptied: truncate(path, 0)
        case .vaultSymlinked:
            rename(path, path + ".real")
            symlink(path + ".real", path)
        case .keySymlinked:
            rename(location.keyFilePath, location.keyFilePath + ".real")
            symlink(location.keyFilePath + ".real", location.keyFilePath)
        case .foreignOwner: chown(path, 65534, 65534)
        case .plantedCache, .swappedPresenceKey: break  // HostileKeyTrials
        case .scopeIndexPartial, .scopeIndexSwapped, .scopeIndexPointingElsewhere:
            // A row still there, and one of another service (rows 4 apart), both not deleted.
            let rows = (1...Int64(12)).filter { $0 != removedRow }
            let row = rows[random.next(below: rows.count)]
            let others = rows.filter { ($0 - 1) / 4 != (row - 1) / 4 }
            let other = others[random.next(below: others.count)]
            let kind: ScopeIndexEdit = edit == .scopeIndexPartial ? .partial : edit == .scopeIndexSwapped ? .swapped : .pointingElsewhere
            _ = try? kind.apply(to: path, row: row, other: other)
        }
    }
}
