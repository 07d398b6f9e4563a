/// Safari-style generated passwords: four groups of three characters joined by `-`
/// (`xxx-xxx-xxx-xxx`), from a 55-character alphabet without look-alikes, with at least one
/// lowercase letter, one uppercase letter and one digit from 3-9, as Apple's
/// `SecCreateSharedWebCredentialPassword` makes them.
package enum PasswordGenerator {
    static let lowercase = Array("abcdefghkmnopqrstuvwxyz".utf8)
    static let uppercase = Array("ABCDEFGHJKLMNPQRSTUVWXYZ".utf8)
    static let digits = Array("23456789".utf8)
    /// The alphabet: no i, j, l, I, O, 0 or 1.
    static let alphabet = lowercase + uppercase + digits
    /// The digits that satisfy the "one digit" rule (a `2` alone does not, as in Apple's).
    static let requiredDigits = Array("3456789".utf8)

    /// A new password, drawn from OpenSSL's CSPRNG without modulo bias (rejection sampling);
    /// a draw missing a required class is discarded whole and drawn again.
    package static func safari() -> String {
        while true {
            let characters = (0..<12).map { _ in alphabet[Int(Random.uniform(below: UInt32(alphabet.count)))] }
            guard characters.contains(where: lowercase.contains), characters.contains(where: uppercase.contains),
                characters.contains(where: requiredDigits.contains)
            else { continue }
            var text: [UInt8] = []
            for (index, character) in characters.enumerated() {
                if index > 0 && index % 3 == 0 { text.append(UInt8(ascii: "-")) }
                text.append(character)
            }
            return String(decoding: text, as: UTF8.self)
        }
    }

    /// The characters ``password(length:characters:)`` draws from.
    package enum Characters: String, Sendable, CaseIterable {
        /// Safari's alphabet without look-alikes (no i, j, l, I, O, 0 or 1): lowercase,
        /// uppercase and a digit from 3-9 each at least once.
        case safari
        /// A-Z, a-z and 0-9, each class at least once.
        case alphanumeric
        /// Every printable ASCII character but space: letters of both cases, a digit and a
        /// symbol each at least once.
        case printable
        /// 0-9 only (a PIN).
        case digits

        /// The classes a password must each draw from at least once; their union is the alphabet.
        var classes: [[UInt8]] {
            switch self {
            case .safari: [PasswordGenerator.lowercase, PasswordGenerator.uppercase, PasswordGenerator.requiredDigits + Array("2".utf8)]
            case .alphanumeric: [Array("abcdefghijklmnopqrstuvwxyz".utf8), Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8), Array("0123456789".utf8)]
            case .printable:
                [
                    Array("abcdefghijklmnopqrstuvwxyz".utf8), Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8), Array("0123456789".utf8),
                    Array("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~".utf8),
                ]
            case .digits: [Array("0123456789".utf8)]
            }
        }
    }

    /// The shortest and longest passwords ``password(length:characters:)`` makes.
    package static let lengths = 4...1024

    /// A new password of `length` characters from `characters`, drawn from OpenSSL's CSPRNG
    /// without modulo bias; a draw missing one of the set's classes is discarded and drawn again.
    /// - Throws: ``StoreError/invalidArgument(_:)`` for a length outside ``lengths``.
    package static func password(length: Int, characters: Characters) throws(StoreError) -> String {
        guard lengths.contains(length) else {
            throw .invalidArgument("a generated password has \(lengths.lowerBound) to \(lengths.upperBound) characters, not \(length)")
        }
        let classes = characters.classes
        // The "2" in Safari's alphabet does not count as its digit (as in Apple's).
        let required = characters == .safari ? [lowercase, uppercase, requiredDigits] : classes
        let alphabet = classes.flatMap { $0 }
        while true {
            let drawn = (0..<length).map { _ in alphabet[Int(Random.uniform(below: UInt32(alphabet.count)))] }
            if length >= required.count, !required.allSatisfy({ group in drawn.contains(where: group.contains) }) { continue }
            return String(decoding: drawn, as: UTF8.self)
        }
    }
}
