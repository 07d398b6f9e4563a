/// Safari-style generated passwords: four groups of three characters joined by `-`
/// (`xxx-xxx-xxx-xxx`), from a 55-character alphabet without look-alikes, with at least one
/// lowercase letter, one uppercase letter and one digit from 3-9, as Apple's
/// `SecCreateSharedWebCredentialPassword` makes them.
public enum PasswordGenerator {
    static let lowercase = Array("abcdefghkmnopqrstuvwxyz".utf8)
    static let uppercase = Array("ABCDEFGHJKLMNPQRSTUVWXYZ".utf8)
    static let digits = Array("23456789".utf8)
    /// The alphabet: no i, j, l, I, O, 0 or 1.
    static let alphabet = lowercase + uppercase + digits
    /// The digits that satisfy the "one digit" rule (a `2` alone does not, as in Apple's).
    static let requiredDigits = Array("3456789".utf8)

    /// A new password, drawn from OpenSSL's CSPRNG without modulo bias (rejection sampling);
    /// a draw missing a required class is discarded whole and drawn again.
    public static func safari() -> String {
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
}
