/// What names this vault wherever its file is opened from: what `keychain serve` tells the bus
/// it serves, so that a command of the same user knows the daemon serves its vault without
/// reading the daemon's open files.
extension Vault {
    /// The vault's id in lowercase hexadecimal, set when the file was created and kept through
    /// every rotation and passphrase change; nil while no vault file exists.
    package var identifier: String? {
        guard let engine = try? vault(creating: false) else { return nil }
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in engine.vaultID { text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]] }
        return String(decoding: text, as: UTF8.self)
    }
}
