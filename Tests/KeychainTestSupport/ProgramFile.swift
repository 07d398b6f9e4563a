import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A program a test writes (a pinentry, a helper script), then runs or hands to `keychain`.
public enum ProgramFile {
    /// Writes `text` to a new executable file at `path` through a descriptor closed on exec: a
    /// program a test running beside this one starts meanwhile must not inherit it open for
    /// writing, or running this one fails with "text file busy" (ETXTBSY) for as long as that
    /// program lives. False when the file could not be written whole.
    @discardableResult
    public static func write(_ text: String, to path: String) -> Bool {
        let output = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o700)
        guard output >= 0 else { return false }
        defer { close(output) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(output, $0.baseAddress, $0.count) }
        return written == bytes.count && fchmod(output, 0o700) == 0
    }
}
