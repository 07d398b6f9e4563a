import Testing

@testable import KeychainCore

/// An invitation code typed by hand forgives case, spaces, dashes and the digits
/// mistaken for letters, and its check letters tell a typo from a code that is well typed.
@Suite("Invitation codes")
struct InvitationCodeTests {
    let code = InvitationCode(userID: Array(0..<16), secret: SecretBytes(Array(100..<116)))

    func parses(_ text: String) -> Bool {
        guard let parsed = try? InvitationCode(parsing: text) else { return false }
        return parsed.userID == code.userID && parsed.secret == code.secret
    }

    @Test("a code reads back in any case, with spaces for dashes, without dashes, split over lines, and with 0, 1 and 8 for O, I and B")
    func forgiving() {
        let text = code.text
        #expect(text.hasPrefix("KC1-") && text.count == 4 + 56 + 13)
        #expect(parses(text))
        #expect(parses(text.lowercased()))
        #expect(parses(text.replacing("-", with: " ")))
        #expect(parses(text.replacing("-", with: "")))
        #expect(parses("  " + text.prefix(30) + "\n" + text.dropFirst(30) + "\n"))
        #expect(parses(text.replacing("O", with: "0").replacing("I", with: "1").replacing("B", with: "8")))
    }

    @Test("every one-letter typo is refused as a typo by the check letters, never read as another code")
    func typosCaught() {
        let letters = Array(code.text)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        for index in letters.indices.dropFirst(4) where letters[index] != "-" {
            for replacement in alphabet where replacement != letters[index] {
                var typo = letters
                typo[index] = replacement
                do {
                    _ = try InvitationCode(parsing: String(typo))
                    Issue.record("\(String(typo)) was accepted")
                } catch {
                    #expect(error.description.contains("check letters do not match"), "\(error)")
                }
            }
        }
    }

    @Test("a letter missing, a letter added, and a stranger character each get their own message")
    func otherMistakes() {
        let text = code.text
        func message(_ text: String) -> String {
            do {
                _ = try InvitationCode(parsing: text)
                return "accepted"
            } catch { return error.description }
        }
        #expect(message(String(text.dropLast())).contains("a letter missing"))
        #expect(message(text + "A").contains("a letter added"))
        #expect(message(text.replacing("KC1", with: "KC2")).contains("does not start with KC1"))
        #expect(message(String(text.dropLast()) + "9").contains("'9' is not one of its letters"))
    }
}
