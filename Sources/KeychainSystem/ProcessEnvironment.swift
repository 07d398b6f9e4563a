#if canImport(Glibc)
    import Glibc
#endif

/// The process environment, read straight from `environ`.
///
/// Foundation's `ProcessInfo.environment` splits every entry at its `=` character by
/// character (grapheme breaking included), a visible share of a short-lived command's work
/// (keychain-bench's `keychain get (fresh process)` row). Entries are read here as bytes.
package enum ProcessEnvironment {
    /// Every variable of the process, as `ProcessInfo.processInfo.environment` gives them
    /// (an entry without `=` is left out; for a name given twice, the first wins, as `getenv`).
    package static var current: [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let length = strlen(pointer)
            pointer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
                guard let equals = memchr(bytes, Int32(UInt8(ascii: "=")), length) else { return }
                let nameLength = bytes.distance(to: equals.assumingMemoryBound(to: UInt8.self))
                let name = String(decoding: UnsafeBufferPointer(start: bytes, count: nameLength), as: UTF8.self)
                guard result[name] == nil else { return }
                result[name] = String(decoding: UnsafeBufferPointer(start: bytes + nameLength + 1, count: length - nameLength - 1), as: UTF8.self)
            }
            entry += 1
        }
        return result
    }

    /// One variable, without reading the others.
    package static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
