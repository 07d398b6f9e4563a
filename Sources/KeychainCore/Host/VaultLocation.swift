import FoundationEssentials
internal import KeychainSystem

/// Where a vault lives: one SQLite file, and beside it the key file of a vault without a passphrase.
public struct VaultLocation: Sendable, Hashable, CustomStringConvertible {
    /// The SQLite database.
    public let path: String

    /// Whether this is the default location (under `$XDG_DATA_HOME`), the only one whose
    /// directory a first write creates: a directory missing from a path someone typed is
    /// more likely a typo than a wish for a new directory.
    let isDefault: Bool
    /// The path as given, when it ends in a slash (it names a directory, not a vault file).
    let directoryName: String?

    /// A relative `path` is taken from the working directory, as a shell user means it. A
    /// path ending in a slash names a directory, and is refused when used.
    public init(path: String) {
        self.init(path: path, isDefault: false)
    }

    private init(path: String, isDefault: Bool) {
        self.path = FileSystem.standardized(FileSystem.absolute(path))
        self.isDefault = isDefault
        directoryName = path.hasSuffix("/") || path.hasSuffix("/.") ? path : nil
    }

    /// Two locations are the same vault when their paths are, however each was chosen.
    public static func == (lhs: VaultLocation, rhs: VaultLocation) -> Bool { lhs.path == rhs.path }
    /// Hashes the path alone, as ``==(_:_:)`` compares it.
    public func hash(into hasher: inout Hasher) { hasher.combine(path) }

    /// Refuses a path that names a directory (`KEYCHAIN_PATH=dir/new/`), before anything is
    /// opened or created there.
    func checkNamesAFile() throws(StoreError) {
        if let directoryName {
            throw .invalidArgument("the vault path \(directoryName) ends in a slash: it names a directory; give the vault file's path (such as \(path)/default.keychain)")
        }
    }

    /// The key file used when the vault has no passphrase (mode 0600).
    package var keyFilePath: String { path + ".key" }
    /// The directory that holds the vault and its key file.
    package var directory: String { FileSystem.parent(of: path) }

    /// Why no vault can be made here, when its directory does not exist and is not the default
    /// vault's (which the first write creates): a mistyped `KEYCHAIN_PATH` or `--vault`. Nil
    /// otherwise. Reads the file system only.
    package var missingDirectory: String? {
        guard !isDefault, case .missing? = try? VaultFile.entry(directory) else { return nil }
        return "the directory \(directory) does not exist; only the default vault's directory is created: create it (mode 0700) or correct the path"
    }
    /// SQLite's companion files in WAL mode.
    package var companionPaths: [String] { [path + "-wal", path + "-shm"] }
    public var description: String { path }

    /// `KEYCHAIN_PATH` if set; else `$XDG_DATA_HOME/keychain/default.keychain`, falling back
    /// to `~/.local/share/keychain/default.keychain`. Only the latter two are created with
    /// their directory by a first write; `KEYCHAIN_PATH`'s directory must exist.
    public static func `default`(environment: [String: String] = VaultLocation.processEnvironment) -> VaultLocation {
        if let explicit = environment["KEYCHAIN_PATH"], !explicit.isEmpty {
            return VaultLocation(path: explicit)
        }
        let dataHome: String
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            dataHome = xdg
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileSystem.homeDirectoryOfUser()
            dataHome = home + "/.local/share"
        }
        return VaultLocation(path: dataHome + "/keychain/default.keychain", isDefault: true)
    }

    /// The process's environment, for ``default(environment:)``'s default: a public default is
    /// compiled into the caller, and the system layer's reader of `environ` is not public.
    @usableFromInline static var processEnvironment: [String: String] { ProcessEnvironment.current }
}
