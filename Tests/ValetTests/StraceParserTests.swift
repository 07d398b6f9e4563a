import Testing

@testable import keychain_reliability

/// Issue 37: the power-loss explorer reads every call strace saw, those another thread's
/// output split in two (`<unfinished ...>`, then `<... resumed>`) included.
@Suite("Reading strace's output for the power-loss explorer")
struct StraceParserTests {
    /// strace's `-xx` form of `text`.
    private func hex(_ text: String) -> String { text.utf8.map { "\\x" + String($0, radix: 16).leftPadded(to: 2) }.joined() }

    /// The failing trace the explorer met on `migrate`, whose D-Bus thread wrote to an eventfd
    /// while the vault's thread wrote and synced the WAL: strace pads a resumed call's short line
    /// to a column (`<... fdatasync resumed>)          = 0`), and every such call was dropped,
    /// so that the states built from the trace lost synced writes and the vault "after" the
    /// command was not the one the command left (now and then, as the threads interleaved).
    @Test("a call split by another thread's line is read whole, its padded result included")
    func resumedCallsAreRead() throws {
        let root = "/r"
        let file = "3<\(hex("/r/f"))>"
        let eventfd = "9<\(hex("anon_inode:[eventfd]"))>"
        let log = """
            100 openat(AT_FDCWD<\(hex(root))>, "\(hex("f"))", O_RDWR|O_CREAT|O_CLOEXEC, 0600) = \(file)
            100 pwrite64(\(file), "\(hex("abc"))", 3, 4096 <unfinished ...>
            101 write(\(eventfd), "\(hex("12345678"))", 8) = 8
            100 <... pwrite64 resumed>)          = 3
            100 fdatasync(\(file) <unfinished ...>
            101 write(\(eventfd), "\(hex("12345678"))", 8) = 8
            100 <... fdatasync resumed>)          = 0
            100 close(\(file))                   = 0

            """
        var parser = StraceParser(root: root, cwd: root, trace: FileTrace())
        try parser.read(log)
        #expect(
            parser.trace.operations == [
                .createFile(path: "f", inode: 1), .write(inode: 1, offset: 4096, bytes: Array("abc".utf8)), .syncFile(inode: 1),
            ])
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
