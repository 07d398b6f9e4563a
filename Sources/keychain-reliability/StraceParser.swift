import Foundation

/// Reads strace's output (`-f -y -xx`: every string and every path in hex escapes) into
/// ``FileOperation``s, following the names, descriptors and offsets as the kernel did.
struct StraceParser {
    let root: String
    let cwd: String
    var trace: FileTrace
    private var names: [String: Int]
    private var directories: Set<String>
    private var nextInode: Int
    private enum Open { case file(Int), directory(String) }
    private var descriptors: [Int: Open] = [:]
    private var offsets: [Int: Int] = [:]
    private var unfinished: [String: String] = [:]

    init(root: String, cwd: String, trace: FileTrace) {
        self.root = root
        self.cwd = cwd
        self.trace = trace
        names = trace.initialNames
        directories = trace.initialDirectories
        nextInode = (trace.initialContents.keys.max() ?? 0) + 1
    }

    mutating func read(_ text: String) throws {
        for raw in text.split(separator: "\n") {
            guard let space = raw.firstIndex(of: " ") else { continue }
            let pid = String(raw[..<space])
            var line = String(raw[raw.index(after: space)...].drop { $0 == " " })
            if line.hasSuffix("<unfinished ...>") {
                unfinished[pid] = String(line.dropLast("<unfinished ...>".count))
                continue
            }
            if line.hasPrefix("<... "), let close = line.range(of: " resumed>") {
                line = (unfinished.removeValue(forKey: pid) ?? "") + line[close.upperBound...]
            }
            try parse(line)
        }
    }

    private mutating func parse(_ line: String) throws {
        // strace pads a short line's result to a column (a resumed call's above all): `)   = 0`.
        guard let open = line.firstIndex(of: "("), let equals = line.range(of: " = ", options: .backwards) else { return }
        let call = line[..<equals.lowerBound]
        guard let close = call.lastIndex(where: { $0 != " " }), call[close] == ")", open < close else { return }
        let name = String(line[..<open])
        let resultText = line[equals.upperBound...]
        guard !resultText.hasPrefix("-1") && !resultText.hasPrefix("?") else { return }
        let result = Int(resultText.prefix { $0 != " " && $0 != "<" }) ?? 0
        let arguments = try Self.split(String(line[line.index(after: open)..<close]))
        switch name {
        case "openat", "open", "creat":
            let pathIndex = name == "openat" ? 1 : 0
            guard let path = resolve(arguments, pathIndex, directoryArgument: name == "openat" ? 0 : nil) else {
                descriptors[result] = nil
                return
            }
            let flags = name == "creat" ? "O_CREAT|O_TRUNC" : (arguments.count > pathIndex + 1 ? arguments[pathIndex + 1] : "")
            if directories.contains(path) {
                descriptors[result] = .directory(path)
            } else {
                let inode: Int
                if let existing = names[path] {
                    inode = existing
                    if flags.contains("O_TRUNC") { trace.operations.append(.truncate(inode: inode, size: 0)) }
                } else if flags.contains("O_CREAT") {
                    inode = newInode(path)
                    names[path] = inode
                    trace.operations.append(.createFile(path: path, inode: inode))
                } else {
                    throw FileTrace.Failure(description: "the traced program opened \(path), which the trace does not know")
                }
                descriptors[result] = .file(inode)
            }
            offsets[result] = 0
        case "write", "pwrite64":
            guard let fd = Self.descriptor(arguments[0]), case .file(let inode)? = descriptors[fd] else { return }
            let bytes = try Self.bytes(arguments[1]).prefix(result)
            let offset = name == "pwrite64" ? Int(arguments[3]) ?? 0 : offsets[fd] ?? 0
            trace.operations.append(.write(inode: inode, offset: offset, bytes: Array(bytes)))
            if name == "write" { offsets[fd] = offset + result }
        case "writev", "pwritev", "pwritev2", "dup", "dup2", "dup3", "sync_file_range":
            if let fd = Self.descriptor(arguments.first ?? ""), descriptors[fd] != nil {
                throw FileTrace.Failure(description: "the traced program called \(name) on a file of the tree; the explorer does not model it")
            }
        case "sync", "syncfs":
            throw FileTrace.Failure(description: "the traced program called \(name); the explorer does not model it")
        case "truncate":
            if resolve(arguments, 0, directoryArgument: nil) != nil {
                throw FileTrace.Failure(description: "the traced program truncated a file of the tree by name; the explorer does not model it")
            }
        case "fcntl":
            if arguments.count > 1, arguments[1].hasPrefix("F_DUPFD"), let fd = Self.descriptor(arguments[0]), descriptors[fd] != nil {
                throw FileTrace.Failure(description: "the traced program duplicated a descriptor of the tree; the explorer does not model it")
            }
        case "lseek":
            guard let fd = Self.descriptor(arguments[0]), descriptors[fd] != nil else { return }
            offsets[fd] = result
        case "ftruncate":
            guard let fd = Self.descriptor(arguments[0]), case .file(let inode)? = descriptors[fd] else { return }
            trace.operations.append(.truncate(inode: inode, size: Int(arguments[1]) ?? 0))
        case "fsync", "fdatasync":
            guard let fd = Self.descriptor(arguments[0]) else { return }
            switch descriptors[fd] {
            case .file(let inode)?: trace.operations.append(.syncFile(inode: inode))
            case .directory(let path)?: trace.operations.append(.syncDirectory(path: path))
            case nil: return
            }
        case "close":
            guard let fd = Int(arguments[0].prefix { $0.isNumber }) else { return }
            descriptors[fd] = nil
            offsets[fd] = nil
        case "link", "linkat":
            let at = name == "linkat"
            guard let from = resolve(arguments, at ? 1 : 0, directoryArgument: at ? 0 : nil),
                let to = resolve(arguments, at ? 3 : 1, directoryArgument: at ? 2 : nil)
            else { return }
            guard let inode = names[from] else { throw FileTrace.Failure(description: "the traced program linked \(from), which the trace does not know") }
            names[to] = inode
            trace.operations.append(.link(path: to, inode: inode))
        case "rename", "renameat", "renameat2":
            let at = name != "rename"
            guard let from = resolve(arguments, at ? 1 : 0, directoryArgument: at ? 0 : nil),
                let to = resolve(arguments, at ? 3 : 1, directoryArgument: at ? 2 : nil)
            else { return }
            if directories.contains(from) { throw FileTrace.Failure(description: "the traced program renamed a directory; the explorer does not model it") }
            names[to] = names.removeValue(forKey: from)
            trace.operations.append(.rename(from: from, to: to))
        case "unlink", "unlinkat", "rmdir":
            let at = name == "unlinkat"
            guard let path = resolve(arguments, at ? 1 : 0, directoryArgument: at ? 0 : nil) else { return }
            if name == "rmdir" || (at && arguments.count > 2 && arguments[2].contains("AT_REMOVEDIR")) {
                directories.remove(path)
                trace.operations.append(.removeDirectory(path: path))
            } else {
                names[path] = nil
                trace.operations.append(.unlink(path: path))
            }
        case "mkdir", "mkdirat":
            let at = name == "mkdirat"
            guard let path = resolve(arguments, at ? 1 : 0, directoryArgument: at ? 0 : nil) else { return }
            directories.insert(path)
            trace.operations.append(.makeDirectory(path: path))
        default:
            return
        }
    }

    private mutating func newInode(_ path: String) -> Int {
        defer { nextInode += 1 }
        trace.firstNames[nextInode] = path
        return nextInode
    }

    /// The path argument at `index`, made absolute (against the directory argument's path or the
    /// working directory) and then relative to the root; nil when it is outside the tree.
    private func resolve(_ arguments: [String], _ index: Int, directoryArgument: Int?) -> String? {
        guard index < arguments.count, let text = try? Self.bytes(arguments[index]) else { return nil }
        var path = String(decoding: text, as: UTF8.self)
        if !path.hasPrefix("/") {
            var base = cwd
            if let directoryArgument {
                // `AT_FDCWD</path>` or `3</path>`: the directory's path is the annotation.
                let argument = arguments[directoryArgument]
                if let open = argument.firstIndex(of: "<"), argument.hasSuffix(">") {
                    base = String(decoding: Self.unescape(argument[argument.index(after: open)..<argument.index(before: argument.endIndex)]), as: UTF8.self)
                }
            }
            path = base + "/" + path
        }
        path = FileTrace.normalized(path)
        if path == root { return "" }
        guard path.hasPrefix(root + "/") else { return nil }
        return String(path.dropFirst(root.count + 1))
    }

    /// The descriptor number of an argument such as `3<\x2f...>`.
    private static func descriptor(_ argument: String) -> Int? { Int(argument.prefix { $0.isNumber }) }

    /// The bytes of a quoted argument ("\x41\x42").
    static func bytes(_ argument: String) throws -> [UInt8] {
        guard argument.hasPrefix("\""), let end = argument.lastIndex(of: "\"") else {
            throw FileTrace.Failure(description: "strace printed \(argument.prefix(40)) where a string was expected")
        }
        if argument[end...].hasPrefix("\"...") { throw FileTrace.Failure(description: "strace cut a string (raise -s)") }
        return unescape(argument[argument.index(after: argument.startIndex)..<end])
    }

    static func unescape(_ text: Substring) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count / 4)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "\\") else { out.append(byte); continue }
            guard let kind = iterator.next() else { break }
            if kind == UInt8(ascii: "x"), let high = iterator.next(), let low = iterator.next() {
                out.append(hex(high) << 4 | hex(low))
            } else {
                switch kind {
                case UInt8(ascii: "n"): out.append(10)
                case UInt8(ascii: "t"): out.append(9)
                default: out.append(kind)
                }
            }
        }
        return out
    }

    private static func hex(_ digit: UInt8) -> UInt8 {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: digit - UInt8(ascii: "A") + 10
        }
    }

    /// Splits strace's argument list at its top-level commas (not inside quotes, <>, {} or []).
    static func split(_ text: String) throws -> [String] {
        var parts: [String] = []
        var current = ""
        var depth = 0
        var quoted = false
        var escaped = false
        for character in text {
            if quoted {
                current.append(character)
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { quoted = false }
                continue
            }
            switch character {
            case "\"": quoted = true; current.append(character)
            case "<", "{", "[": depth += 1; current.append(character)
            case ">", "}", "]": depth -= 1; current.append(character)
            case "," where depth == 0:
                parts.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            default: current.append(character)
            }
        }
        if !current.isEmpty { parts.append(current.trimmingCharacters(in: .whitespaces)) }
        return parts
    }
}
