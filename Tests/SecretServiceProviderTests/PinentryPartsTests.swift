import KeychainCore
import Testing

@testable import KeychainServe

/// The pinentry's pure parts: Assuan's escaping both ways, and where a pinentry can be shown.
@Suite("keychain serve's pinentry parts")
struct PinentryPartsTests {
    @Test("a command's argument escapes %, CR, LF and control bytes, so that no text starts a command of its own")
    func escapesArguments() {
        #expect(AssuanCoding.escape("100% sure\nBYE\r\t") == "100%25 sure%0ABYE%0D%09")
        #expect(AssuanCoding.escape("Passwort für é") == "Passwort für é")
    }

    @Test("a data line decodes %XX (either case) into the passphrase's bytes; a broken escape is refused")
    func decodesData() {
        func decoded(_ text: String) -> [UInt8]? {
            Array(text.utf8).withUnsafeBytes { AssuanCoding.decode($0) }.map { $0.withUnsafeBytes { Array($0) } }
        }
        #expect(decoded("a%25b%0Ac%0d") == Array("a%b\nc\r".utf8))
        #expect(decoded("") == [])
        #expect(decoded("%00") == [0])
        for broken in ["%", "%4", "%G0", "ab%0"] { #expect(decoded(broken) == nil, "\(broken)") }
    }

    @Test("a pinentry is chosen only where it can be shown: a display, GPG_TTY or the daemon's own terminal")
    func choosesWhereItCanBeShown() {
        let program = ["KEYCHAIN_PINENTRY": "/bin/true", "PATH": "/usr/bin:/bin"]
        #expect(PinentryChoice.choose(environment: program, standardInputTerminal: nil) == nil)
        #expect(PinentryChoice.choose(environment: program.merging(["DISPLAY": ":0"]) { $1 }, standardInputTerminal: nil)?.ttyName == nil)
        #expect(PinentryChoice.choose(environment: program.merging(["WAYLAND_DISPLAY": "wayland-0"]) { $1 }, standardInputTerminal: nil) != nil)
        let onTerminal = PinentryChoice.choose(environment: program.merging(["GPG_TTY": "/dev/null", "TERM": "xterm"]) { $1 }, standardInputTerminal: nil)
        #expect(onTerminal?.ttyName == "/dev/null" && onTerminal?.ttyType == "xterm")
        // Not a terminal (a regular file), and a program that is no program: nowhere to show one.
        #expect(PinentryChoice.choose(environment: program.merging(["GPG_TTY": "/etc/passwd"]) { $1 }, standardInputTerminal: nil) == nil)
        #expect(PinentryChoice.choose(environment: ["KEYCHAIN_PINENTRY": "/nonexistent/pinentry", "DISPLAY": ":0"], standardInputTerminal: nil) == nil)
        #expect(PinentryChoice.choose(environment: ["KEYCHAIN_PINENTRY": "true", "DISPLAY": ":0"], standardInputTerminal: nil) == nil)
        // The passphrase file's name is not passed on to the pinentry.
        let passed = PinentryChoice.choose(environment: program.merging(["DISPLAY": ":0", "KEYCHAIN_PASSPHRASE_FILE": "/p"]) { $1 }, standardInputTerminal: nil)
        #expect(passed?.environment["KEYCHAIN_PASSPHRASE_FILE"] == nil && passed?.environment["DISPLAY"] == ":0")
    }
}
