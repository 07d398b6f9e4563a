import Foundation
import KeychainCore

/// A fresh private directory, removed when released.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init() {
        var bytes = Array((NSTemporaryDirectory() + "keychain-tests.XXXXXX").utf8CString)
        let result = bytes.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(result != nil, "mkdtemp failed")
        path = String(cString: result!)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A vault configuration in this directory with the cheapest scrypt the vault accepts
    /// (tests need not pay half a second per unlock), optionally bound to a fake machine id.
    public func vaultConfiguration(
        name: String = "test.keychain", idleTimeout: Duration? = .seconds(300),
        kernelKeyring: Bool = false, machineID: String? = "test-machine"
    ) -> VaultConfiguration {
        var machine = MachineIdentity(paths: [])
        if let machineID {
            let file = path + "/machine-id-\(machineID)"
            _ = FileManager.default.createFile(atPath: file, contents: Data(machineID.utf8))
            machine = MachineIdentity(paths: [file])
        }
        return VaultConfiguration(
            location: VaultLocation(path: path + "/" + name), idleTimeout: idleTimeout,
            scryptParameters: .minimum, usesKernelKeyring: kernelKeyring, machineIdentity: machine)
    }

    public func vaultPath(_ name: String = "test.keychain") -> String { path + "/" + name }

    /// Writes `contents` to a 0600 file here and returns its path (for passphrase files).
    public func file(_ name: String, _ contents: String) -> String {
        let file = path + "/" + name
        _ = FileManager.default.createFile(atPath: file, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600])
        return file
    }
}

public func secret(_ text: String) -> SecretBytes { SecretBytes(utf8: text) }

extension SecretBytes {
    public var string: String { String(decoding: data, as: UTF8.self) }
}
