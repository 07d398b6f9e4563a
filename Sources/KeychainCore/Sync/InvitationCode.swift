/// An invitation code: `KC1-` then the group's user id and a one-use secret in base32, and
/// four check letters, in groups of four (typed on the joining machine; the secret never
/// reaches etcd).
///
/// Typed by hand, it forgives what does not change its meaning: any case, spaces and dashes
/// anywhere, and the digits 0, 1 and 8 for the letters O, I and B they are mistaken for. The
/// check letters tell a typo from a code that is well typed but used, expired or another
/// cluster's.
struct InvitationCode {
    var userID: [UInt8]
    var secret: SecretBytes

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    /// What the letters of 32 bytes take: 256 bits in 5-bit letters.
    private static let payloadLetters = 52
    private static let checkLetters = 4

    var text: String {
        let payload = userID + secret.withUnsafeBytes { Array($0) }
        let letters = Self.letters(payload) + Self.check(payload)
        var groups: [String] = []
        var index = 0
        while index < letters.count {
            groups.append(String(letters[index..<min(index + 4, letters.count)]))
            index += 4
        }
        return "KC1-" + groups.joined(separator: "-")
    }

    init(userID: [UInt8], secret: SecretBytes) {
        self.userID = userID
        self.secret = secret
    }

    /// Reads a code as typed.
    ///
    /// - Throws: ``SyncError/invalidInvitation(_:)`` saying what is wrong: not a code of ours,
    ///   a letter that is not one of its letters, too short or too long, or check letters that
    ///   do not match (a mistyped letter).
    init(parsing text: String) throws(SyncError) {
        var letters = Array(text.uppercased().filter { !$0.isWhitespace && $0 != "-" })
        guard letters.starts(with: "KC1") else { throw .invalidInvitation("it does not start with KC1") }
        letters.removeFirst(3)
        let confusable: [Character: Character] = ["0": "O", "1": "I", "8": "B"]
        letters = letters.map { confusable[$0] ?? $0 }
        if let stranger = letters.first(where: { !Self.alphabet.contains($0) }) { throw .invalidInvitation("'\(stranger)' is not one of its letters") }
        let expected = Self.payloadLetters + Self.checkLetters
        guard letters.count == expected else {
            throw .invalidInvitation(
                "it has \(letters.count) letters after KC1 where a code has \(expected): \(letters.count < expected ? "a letter missing" : "a letter added")?")
        }
        var bits = 0
        var buffer = 0
        var bytes: [UInt8] = []
        for letter in letters.prefix(Self.payloadLetters) {
            buffer = (buffer << 5 | Self.alphabet.firstIndex(of: letter)!) & 0xFFFF
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8((buffer >> bits) & 0xFF))
            }
        }
        // The last payload letter's spare bits are zero in a code this program made.
        guard Self.letters(bytes) == Array(letters.prefix(Self.payloadLetters)), Array(letters.suffix(Self.checkLetters)) == Self.check(bytes) else {
            throw .invalidInvitation("its check letters do not match the rest: a letter is mistyped (compare it with the code shown by 'keychain sync invite')")
        }
        userID = Array(bytes[0..<16])
        secret = SecretBytes(Array(bytes[16...]))
    }

    /// `bytes` in base32 letters, the last one padded with zero bits.
    private static func letters(_ bytes: [UInt8]) -> [Character] {
        var bits = 0
        var buffer = 0
        var out: [Character] = []
        for byte in bytes {
            buffer = buffer << 8 | Int(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[(buffer >> bits) & 31])
            }
            buffer &= (1 << bits) - 1
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return out
    }

    /// The check letters of a payload: 20 bits of its SHA-256, so a mistyped letter passes
    /// about once in a million.
    private static func check(_ payload: [UInt8]) -> [Character] {
        let digest = Digest.sha256(Array("swift-keychain invitation code".utf8) + payload)
        return Array(letters(Array(digest.prefix(3))).prefix(checkLetters))
    }
}
