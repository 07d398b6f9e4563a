import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// This boot's record of each vault's newest generation, in the user's kernel keyring
/// (``GenerationTable``): a copy of the vault older than the record is refused as rolled back.
///
/// The record lives only as long as the boot, and any process of the user can delete it. So
/// every write also stamps the ledger's root with the boot it ran in (when it keeps a record):
/// a vault last written in this boot whose record is gone is a vault whose freshness is
/// unknown, and writes wait until the owner confirms this copy (``acceptCurrentGeneration()``,
/// `keychain verify --accept`). After a reboot the record's absence is normal.
///
/// Records are kept per vault and per place: a copy of the vault restored elsewhere has its
/// own record, and never takes the record of the vault it was copied from.
extension VaultState {
    /// The boot a write stamps into the ledger: this boot when this process keeps generation
    /// records (the kernel keyring is on and works), else none.
    var recordingBoot: [UInt8] {
        guard currentKernelKeyringState() == .available, let boot else { return BootIdentity.none }
        return boot
    }

    /// This boot's newest generation of this vault, when the kernel keyring holds a genuine record.
    func seenGeneration(key: HMACKey) -> UInt64? {
        guard configuration.usesKernelKeyring else { return nil }
        return GenerationTable.generation(in: kernelKeyring.load(GenerationTable.description), key: key, recordID: generationRecordID)
    }

    /// Whether a root this process just authenticated, with no record of its generation in the
    /// kernel keyring, was written in this boot by a process that kept one: the record vanished.
    func recordVanished(_ root: LedgerRoot?, seen: UInt64?) -> Bool {
        guard seen == nil, let root, root.writerBoot != BootIdentity.none else { return false }
        return root.writerBoot == recordingBoot
    }

    /// What a write meets when the record vanished: it waits for the owner's word.
    var generationRecordMissing: StoreError {
        .tampered(
            "\(location.path) was last written in this boot, but this boot's record of its newest generation is gone from the kernel keyring (deleted, or pushed out by many other vaults), so an older copy of the file could not be told from the current one; check the vault with keychain verify, then confirm this copy with keychain verify --accept"
        )
    }

    /// What reads of a vault whose record vanished say (the command on standard error, a
    /// library program with `KEYCHAIN_LOG`): they go on, but nothing vouches that the copy
    /// read is the newest.
    var readsUnvouched: String {
        "\(location.path) was last written in this boot, but this boot's record of its newest generation is gone from the kernel keyring, so an older copy of the file put back could not be told from the current one: what is read from it is not vouched for; check the vault with keychain verify, then confirm this copy with keychain verify --accept"
    }

    /// Whether the ledger this connection holds was written in this boot and this boot's
    /// record of it is still gone (the owner has not accepted the copy since): reads from it
    /// are not vouched for. Reads the kernel keyring, writes nothing.
    var readsAreUnvouched: Bool {
        // A read that found nothing may have looked at no row (and so at no ledger): it is looked at now.
        if ledger.state == nil, header.version >= 3 { try? checkedRead(.rowsAsRead) { () throws(StoreError) in } }
        guard let state = ledger.state, state.recordVanished else { return false }
        guard let key = try? ledgerKey() else { return true }
        return !recordReturned(key: key)
    }

    /// Before a write whose ledger check found the record vanished: true when the record is
    /// back (another process of the owner accepted the vault meanwhile). `waiting`, it is
    /// looked for a few times over a tenth of a second first: two processes updating the table
    /// at once (for other vaults) can drop this vault's entry for a moment, until the writer
    /// whose update lost makes it again.
    func recordReturned(key: HMACKey, waiting: Bool = false) -> Bool {
        for attempt in 0..<(waiting ? 5 : 1) {
            if attempt > 0 { usleep(20_000) }
            guard let state = ledger.state, let seen = seenGeneration(key: key), seen >= state.generation else { continue }
            ledger.recordReturned()
            return true
        }
        return false
    }

    /// Records the committed generation in the kernel keyring, unless a newer one is there; an
    /// update lost to another process's (both read the table, both replaced it) is made again.
    func rememberGeneration() {
        guard let state = ledger.state else { return }
        rememberGeneration(state.generation, beside: false)
    }

    /// Records `generation` under the current ledger key; `beside`, keeping the entries under
    /// other keys (a rotation about to commit: until it does, the old key's entry is the one
    /// other processes check).
    func rememberGeneration(_ generation: UInt64, beside: Bool) {
        guard configuration.usesKernelKeyring, let key = try? ledgerKey() else { return }
        let recordID = generationRecordID
        for _ in 0..<4 {
            var recorded = false
            let stored = Self.updateGenerationTable(kernelKeyring) { table in
                if let seen = GenerationTable.generation(in: table, key: key, recordID: recordID), seen >= generation {
                    recorded = true
                    return nil
                }
                return GenerationTable.recording(generation, in: table, key: key, recordID: recordID, keepingOthers: beside)
            }
            // Stored while no other process could update the table: nothing can have dropped it.
            if recorded || stored { return }
        }
    }

    /// The owner's confirmation that this copy of the vault is the current one, after its
    /// record vanished: the vault is checked whole (every row against the ledger) and its
    /// generation recorded for this boot. Needs the master key in this process (the passphrase,
    /// or the key file of a vault without one), never only keys another process left.
    ///
    /// - Throws: ``StoreError/locked`` without the master key; the ledger check's errors
    ///   (``StoreError/tampered(_:)``) when the vault is not sound; ``StoreError/unavailable(_:)``
    ///   when the kernel keyring keeps no record here.
    func acceptCurrentGeneration() throws(StoreError) {
        try loadImplicitKeys()
        guard lockState.keys.master != nil else { throw .locked }
        guard currentKernelKeyringState() == .available else {
            throw .unavailable("the kernel keyring is off or refused here: this boot keeps no record of the vault's generation to confirm")
        }
        try checkedRead(.everyRow) { () throws(StoreError) in }
        rememberGeneration()
        guard let key = try? ledgerKey(), recordReturned(key: key) else {
            throw .io("the kernel keyring did not keep the record of the vault's generation; nothing was confirmed")
        }
    }

    /// Whether this boot's record vouches for the vault as current, for `status` and `verify`
    /// (the vault's lock held).
    func rollbackCheck() -> RollbackCheck {
        guard configuration.usesKernelKeyring else { return .notChecked("the kernel keyring is off") }
        guard currentKernelKeyringState() == .available else { return .notChecked("the kernel keyring is refused here") }
        guard header.version >= 3 else { return .notChecked("vault format \(header.version) records no boot") }
        do throws(StoreError) {
            try checkedRead(.rowsAsRead) { () throws(StoreError) in }
        } catch {
            return .notChecked(error.isUnavailableKey ? "locked" : error.description)
        }
        guard let state = ledger.state else { return .notChecked("no ledger") }
        if state.recordVanished, let key = try? ledgerKey(), !recordReturned(key: key) { return .unknown }
        return (try? ledgerKey()).flatMap { seenGeneration(key: $0) } == nil ? .noRecordThisBoot : .current
    }

    /// Drops this boot's record of this vault.
    func forgetGeneration() {
        guard configuration.usesKernelKeyring else { return }
        Self.forgetGeneration(of: header.vaultID, at: location, in: kernelKeyring)
    }

    /// Drops this boot's record of the vault at `location` (a restore puts an older copy back on purpose).
    static func forgetGeneration(of vaultID: [UInt8], at location: VaultLocation, in kernelKeyring: KernelKeyring) {
        let recordID = GenerationTable.recordID(vaultID: vaultID, path: location.path)
        updateGenerationTable(kernelKeyring) { table in table.map { GenerationTable.forgetting(recordID, in: $0) } }
    }

    /// Reads the generation table, lets `change` make the new one (nil: leave it), and replaces
    /// it, under one lock for the whole process and the user's lock for the table
    /// (``KeyringUpdateLock``), so that no two updates, in this process or another, drop each
    /// other's entries.
    /// - Returns: true when the new table was stored while holding the user's lock (it then
    ///   holds the change until the next update); false when nothing changed, the kernel
    ///   refused it, or the lock was passed by, so that a caller that must know looks again.
    @discardableResult
    static func updateGenerationTable(_ kernelKeyring: KernelKeyring, _ change: (SecretBytes?) -> SecretBytes?) -> Bool {
        generationTableLock.withLock { _ in
            KeyringUpdateLock.withLock(GenerationTable.description) { exclusive in
                guard let updated = change(kernelKeyring.load(GenerationTable.description)) else { return false }
                // The kernel refuses an empty payload: the last entry goes with the key.
                if updated.count == 0 {
                    kernelKeyring.remove(GenerationTable.description)
                    return exclusive
                }
                do {
                    try kernelKeyring.store(updated, as: GenerationTable.description)
                    return exclusive
                } catch {
                    return false
                }
            }
        }
    }
}

private let generationTableLock = Mutex(())
