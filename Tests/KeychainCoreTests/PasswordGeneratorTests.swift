import Testing

@testable import KeychainCore

@Suite("Safari-style password generation")
struct PasswordGeneratorTests {
    static let draws = (0..<100_000).map { _ in PasswordGenerator.safari() }

    @Test("every password is xxx-xxx-xxx-xxx from the alphabet, with a lowercase, an uppercase and a digit 3-9")
    func format() {
        let alphabet = Set(PasswordGenerator.alphabet)
        for password in Self.draws.prefix(20_000) {
            let bytes = Array(password.utf8)
            #expect(bytes.count == 15)
            for (index, byte) in bytes.enumerated() {
                if index % 4 == 3 { #expect(byte == UInt8(ascii: "-")) } else { #expect(alphabet.contains(byte)) }
            }
            #expect(bytes.contains(where: PasswordGenerator.lowercase.contains))
            #expect(bytes.contains(where: PasswordGenerator.uppercase.contains))
            #expect(bytes.contains(where: PasswordGenerator.requiredDigits.contains))
        }
    }

    @Test("100,000 draws are all different")
    func unique() {
        #expect(Set(Self.draws).count == Self.draws.count)
    }

    @Test(
        "characters are uniform within each class (chi-square, p < 0.0001 to fail)",
        arguments: [
            ("lowercase", PasswordGenerator.lowercase, 55.8), ("uppercase", PasswordGenerator.uppercase, 57.3),
            ("digits 3-9", PasswordGenerator.requiredDigits, 28.4),
        ])
    func uniformWithinClasses(name: String, characters: [UInt8], critical: Double) {
        var counts: [UInt8: Int] = [:]
        for password in Self.draws { for byte in password.utf8 where characters.contains(byte) { counts[byte, default: 0] += 1 } }
        let total = Double(counts.values.reduce(0, +))
        let expected = total / Double(characters.count)
        let chiSquare = characters.reduce(0.0) { sum, character in
            let observed = Double(counts[character] ?? 0)
            return sum + (observed - expected) * (observed - expected) / expected
        }
        #expect(chiSquare < critical, "\(name): chi-square \(chiSquare) over \(characters.count - 1) degrees of freedom")
    }
}
