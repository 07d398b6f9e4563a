import FoundationEssentials
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A vault creation interrupted between linking the key file and linking the vault (a kill in
/// those microseconds) leaves the key file, and the finished vault under its temporary name
/// (`<vault>.new-<pid>-<random>`). Found beside an orphaned key file, such a vault, whose
/// header opens with that key file, is the one the key file belongs to: a write links it into
/// place (finishing the creation; it holds no item yet), and a read finds no vault yet (it only
/// looks for the file: opening it would make SQLite write beside it, and a read writes nothing).
extension VaultState {
    /// The temporary file of an interrupted creation of the vault at `location`, if there is one.
    /// For a read (`forWrite` false), the first candidate file, unopened.
    static func interruptedCreation(_ location: VaultLocation, forWrite: Bool) -> String? {
        let directory = location.directory
        let prefix = String(location.path.split(separator: "/").last ?? "") + ".new-"
        guard let entries = try? FileSystem.entryNames(in: directory) else { return nil }
        let names = entries.filter { $0.hasPrefix(prefix) && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        guard case .present? = try? VaultFile.entry(location.keyFilePath), let keyFile = try? VaultFile.readKeyFile(location.keyFilePath) else { return nil }
        for name in names.sorted() {
            let path = directory + "/" + name
            guard (try? VaultFile.checkFile(path)) == true else { continue }
            guard forWrite else { return path }
            guard let connection = try? Connection(path: path, create: false, persistentSidecars: false),
                let bytes = try? VaultDatabase.storedHeader(in: connection), let header = try? VaultHeader.decode(bytes),
                (try? AESGCM.open(header.wrappedMasterKey, key: keyFile, associatedData: RecordCoding.masterKeyAssociatedData(header))) != nil
            else { continue }
            return path
        }
        return nil
    }

    /// Links the interrupted creation's vault into place; true when a vault is in place after
    /// (this process's link, or another's a moment before).
    static func finishInterruptedCreation(_ temporary: String, _ location: VaultLocation) throws(StoreError) -> Bool {
        _ = try VaultFile.linkIntoPlace(temporary, location.path)
        if case .present = try VaultFile.entry(location.path) { return true }
        return false
    }
}
