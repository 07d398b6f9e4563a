internal import KeychainSystem

/// Which boot of the machine this is, as the kernel names it (`boot_id`, a new random value at
/// every boot), reduced to 16 bytes: a vault's ledger records the boot of its last write, so
/// that a process can tell "this boot's record of the vault is gone" from "first use since a
/// reboot".
struct BootIdentity: Sendable {
    /// The file that holds the boot id (tests point it elsewhere to play another boot).
    var path = "/proc/sys/kernel/random/boot_id"

    /// The boot's 16-byte digest, or nil when the kernel does not say (then no write claims a boot).
    func read() -> [UInt8]? {
        guard let bytes = try? FileSystem.readAll(path, limit: 256) else { return nil }
        let text = bytes.withUnsafeBytes { Array($0) }.filter { $0 > 0x20 }
        guard !text.isEmpty else { return nil }
        return Array(Digest.sha256(text).prefix(Self.size))
    }

    static let size = 16
    /// What a ledger records when its writer claimed no boot.
    static let none = [UInt8](repeating: 0, count: size)
}
