import FoundationEssentials

/// Where a vault lives: one SQLite file, and beside it the key file of a vault without a passphrase.
public struct VaultLocation: Sendable, Hashable, CustomStringConvertible {
    /// The SQLite database.
    public let path: String

    /// A relative `path` is taken from the working directory, as a shell user means it.
    public init(path: String) {
        self.path = FileSystem.standardized(FileSystem.absolute(path))
    }

    /// The key file used when the vault has no passphrase (mode 0600).
    public var keyFilePath: String { path + ".key" }
    /// The directory that holds the vault and its key file.
    public var directory: String { FileSystem.parent(of: path) }
    /// SQLite's companion files in WAL mode.
    public var companionPaths: [String] { [path + "-wal", path + "-shm"] }
    public var description: String { path }

    /// `KEYCHAIN_PATH` if set; else `$XDG_DATA_HOME/keychain/default.keychain`, falling back
    /// to `~/.local/share/keychain/default.keychain`.
    public static func `default`(environment: [String: String] = ProcessEnvironment.current) -> VaultLocation {
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
        return VaultLocation(path: dataHome + "/keychain/default.keychain")
    }
}
