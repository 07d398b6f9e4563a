import FoundationEssentials

/// What ``Vault/verify()`` found: SQLite's own check of the file, and each item tried with the
/// keys this process holds.
public struct VaultReport: Sendable, Equatable {
    /// One item that does not open: its row number and why (never its names or value).
    public struct Damage: Sendable, Equatable {
        /// The row number (`items.id`), for `sqlite3` and for a report.
        public let row: Int64
        /// Why it does not open (never a name or a value).
        public let reason: String
    }

    /// SQLite's `integrity_check`: `ok`, or its first complaint.
    public var integrity: String
    /// Whether the rows are exactly the set the vault's item ledger vouches for, at a generation
    /// no older than this boot has seen: `ok`, or what failed (a deleted or restored row, a
    /// rolled-back file). A format-1 vault has no ledger: `none (format 1)`.
    public var ledger: String = "ok"
    /// How many items the vault holds.
    public var items: Int
    /// Items whose attributes and value open and authenticate.
    public var intact: Int
    /// Items that could not be tried here: locked classes, other machines' ThisDeviceOnly
    /// items, and values behind a proof of presence (their attributes are checked).
    public var notTried: Int
    /// The items that do not open, with the reason.
    public var damaged: [Damage]
    /// Whether this boot's record vouches that the file is the vault's newest copy; an
    /// ``RollbackCheck/unknown`` one is not damage (``isSound`` leaves it out) but holds writes back.
    public var rollbackCheck: RollbackCheck = .notChecked("not asked")

    /// Whether the file, the ledger and every item tried are sound.
    public var isSound: Bool { integrity == "ok" && damaged.isEmpty && !ledgerFailed }

    var ledgerFailed: Bool { ledger != "ok" && ledger != Self.noLedger && !ledger.hasPrefix("not checked") }
    static let noLedger = "none (format 1)"
}

extension VaultState {
    /// Tries every item: attributes, then value (a value behind an access control only to its
    /// outer seal, which needs no proof).
    func verify() throws(StoreError) -> VaultReport {
        let integrity = try integrityReport()
        var report = VaultReport(integrity: integrity, items: 0, intact: 0, notTried: 0, damaged: [])
        do throws(StoreError) {
            try checkedRead { () throws(StoreError) in }
            if header.version < 2 { report.ledger = VaultReport.noLedger }
        } catch {
            report.ledger = error.isUnavailableKey ? "not checked: \(error.description)" : error.description
        }
        try items.forEveryRow { (id: Int64, read: Result<ItemRow, StoreError>) in
            report.items += 1
            do throws(StoreError) {
                let row = try read.get()
                _ = try decryptAttributes(row)
                if row.accessControl == nil { _ = try open(row.value ?? [], row: row, part: .value) }
                guard !isCarriedOver(row) else { throw carriedRowRefused }
                report.intact += 1
            } catch {
                if error.isUnavailableKey || error == .interactionNotAllowed {
                    report.notTried += 1
                } else {
                    report.damaged.append(.init(row: id, reason: error.description))
                }
            }
        }
        report.rollbackCheck = rollbackCheck()
        return report
    }

    /// Every item that opens here, with its value (presence items only when `context` gives
    /// the proof); how many did not.
    func openableItems() throws(StoreError) -> (items: [Item], leftBehind: Int) {
        var items: [Item] = []
        var left = 0
        for row in try self.items.allRows() {
            do throws(StoreError) {
                guard row.accessControl == nil else { left += 1; continue }
                var attributes = try decryptAttributes(row)
                attributes.creationDate = nil
                attributes.modificationDate = nil
                items.append(Item(row.itemClass, attributes: attributes, value: try open(row.value ?? [], row: row, part: .value)))
            } catch {
                left += 1
            }
        }
        return (items, left)
    }
}

extension Vault {
    /// Checks the vault file with SQLite and tries every item with the keys available here.
    /// - Throws: ``StoreError/noVault(path:)``, and the errors of opening the file at all.
    public func verify() throws(StoreError) -> VaultReport {
        guard let vault = try openedIfPresent() else { throw .noVault(path: location.path) }
        return try vault.inUse { (state) throws(StoreError) in try state.verify() }
    }

    /// Confirms that this copy of the vault is the current one when this boot's record of its
    /// newest generation vanished (``RollbackCheck/unknown``, after which writes wait): checks
    /// every row against the ledger, then records the vault's generation for this boot. Needs
    /// the master key in this process: unlock with the passphrase first (keys another process
    /// left in the kernel keyring are not enough); a vault without a passphrase uses its key file.
    ///
    /// - Throws: ``StoreError/noVault(path:)``; ``StoreError/locked`` without the master key;
    ///   ``StoreError/tampered(_:)`` when the rows are not those the ledger vouches for;
    ///   ``StoreError/unavailable(_:)`` when the kernel keyring keeps no record here.
    public func acceptCurrentGeneration() throws(StoreError) {
        guard let vault = try openedIfPresent() else { throw .noVault(path: location.path) }
        try vault.inUse { (state) throws(StoreError) in try state.acceptCurrentGeneration() }
    }

    /// Whether what this process last read from the vault is not vouched for: the vault was
    /// written in this boot, and this boot's record of its newest generation is gone
    /// (``RollbackCheck/unknown``). For the command, which says so after a read; writes nothing.
    package var readsAreUnvouched: Bool {
        guard let vault = (try? openedIfPresent()) ?? nil else { return false }
        return vault.locked { $0.readsAreUnvouched }
    }

    /// Copies every item that still opens here into a new vault at `path` (with `passphrase`
    /// when given, else a key file), in one transaction, so that what a damaged vault still
    /// holds is saved. Items under an access control, and those that do not open, stay behind.
    /// - Returns: how many were copied and how many stayed behind.
    /// - Throws: ``StoreError/invalidArgument(_:)`` when a file is already at `path`, its key
    ///   file or its SQLite sidecars.
    public func recover(to path: String, passphrase: SecretBytes?) throws(StoreError) -> (copied: Int, leftBehind: Int) {
        guard let vault = try openedIfPresent() else { throw .noVault(path: location.path) }
        let destination = VaultLocation(path: path)
        try VaultDestination.requireFree(destination, for: "recover")
        let (items, left) = try vault.inUse { (state) throws(StoreError) in try state.openableItems() }
        var configuration = self.configuration
        configuration.location = destination
        configuration.passphraseEnvironment = nil
        let target = try Vault(configuration)
        if let passphrase { try target.changePassphrase(from: nil, to: passphrase) }
        if !items.isEmpty { try target.write(items.map { .add($0) }) }
        return (items.count, left)
    }
}
