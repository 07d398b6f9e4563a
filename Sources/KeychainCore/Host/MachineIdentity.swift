import FoundationEssentials

/// What binds ThisDeviceOnly classes to one machine: the systemd/D-Bus machine id.
///
/// A vault copied to another machine derives a different wrapping key there, so its
/// ThisDeviceOnly items cannot be opened (``StoreError/boundToAnotherMachine``).
public struct MachineIdentity: Sendable {
    /// The files read, first present wins.
    public var paths: [String]

    /// A machine identity read from the first of `paths` that exists.
    public init(paths: [String] = ["/etc/machine-id", "/var/lib/dbus/machine-id"]) {
        self.paths = paths
    }

    /// The machine id's bytes, or nil when no machine id exists (some minimal containers).
    func read() -> [UInt8]? {
        for path in paths {
            if let data = FileManager.default.contents(atPath: path) {
                let trimmed = Array(data).drop { $0 <= 0x20 }.reversed().drop { $0 <= 0x20 }.reversed()
                if !trimmed.isEmpty { return Array(trimmed) }
            }
        }
        return nil
    }
}
