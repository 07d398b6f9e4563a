import Foundation
@testable import KeychainCore

/// A fresh directory per test, removed when the test ends.
final class TemporaryDirectory {
    let path: String
    init() {
        let template = NSTemporaryDirectory() + "keychain-tests.XXXXXX"
        var bytes = Array(template.utf8CString)
        let result = bytes.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(result != nil, "mkdtemp failed")
        path = String(cString: result!)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    func vaultConfiguration(name: String = "test.keychain", idleTimeout: Duration? = .seconds(300), kernelKeyring: Bool = false,
                            machineID: String? = nil) -> VaultConfiguration {
        var machine = MachineIdentity()
        if let machineID {
            let file = path + "/machine-id-\(machineID)"
            FileManager.default.createFile(atPath: file, contents: Data(machineID.utf8))
            machine = MachineIdentity(paths: [file])
        }
        return VaultConfiguration(location: VaultLocation(path: path + "/" + name), idleTimeout: idleTimeout,
                                  scryptParameters: .minimum, usesKernelKeyring: kernelKeyring, machineIdentity: machine)
    }
}

extension SecretBytes {
    var string: String { String(decoding: data, as: UTF8.self) }
}

func secret(_ s: String) -> SecretBytes { SecretBytes(utf8: s) }
