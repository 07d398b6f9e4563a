#if canImport(Glibc)
    import Glibc
#endif

/// The calls that ask whether a descriptor is a terminal, and which.
extension SystemCall {
    /// `isatty(3)`: whether `fd` is open on a terminal.
    package static func isTerminal(_ fd: Int32) -> Bool {
        isatty(fd) == 1
    }

    /// `ttyname_r(3)`: the path of the terminal `fd` is open on; nil when it is not a terminal.
    package static func terminalName(_ fd: Int32) -> String? {
        var name = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard ttyname_r(fd, &name, name.count) == 0 else { return nil }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
