import Foundation

/// Locksmith's parser of untrusted bytes (a stored payload), for the fuzz targets. Not API.
@_spi(Fuzzing) public enum LocksmithFuzzEntryPoints {
    /// The most work the reader may do per input byte (plus a constant): the property the fuzz
    /// target checks, so that no input costs more than a bounded time and memory.
    public static let workPerByte = 16

    /// Decodes a keyed-archive payload and walks all that came out, as an application would,
    /// so that the fuzzer keeps inputs that decode to new shapes. Traps if the reader did more
    /// than ``workPerByte`` work per input byte, or if the walk visits more than the reader's
    /// node bound. Whether it was a dictionary.
    public static func payload(_ bytes: [UInt8]) -> Bool {
        var work = 0
        let decoded = KeyedArchiveReader.decodeDictionary(Data(bytes), work: &work)
        precondition(work <= workPerByte * bytes.count + 1024, "the payload reader did \(work) steps for \(bytes.count) bytes")
        guard let dictionary = decoded else { return false }
        var shapes = 0, visited = 0
        func walk(_ value: Any, depth: Int) {
            visited += 1
            precondition(
                depth <= KeyedArchiveReader.maximumDepth && visited <= KeyedArchiveReader.maximumNodes,
                "a decoded payload unfolds past the reader's bounds")
            // Collections first: casting a Swift array to `String` or `NSNumber` bridges the
            // whole array to an NSArray on the way, once per level, which made a deep nest cost
            // seconds under AddressSanitizer (a timeout the harness had, not the reader).
            switch value {
            case let array as [Any]: for element in array { walk(element, depth: depth + 1) }
            case let nested as [String: Any]: for (_, element) in nested { walk(element, depth: depth + 1) }
            case let string as String: shapes &+= string.isEmpty ? 1 : 2
            case let data as Data: shapes &+= data.isEmpty ? 5 : 6
            case is Date: shapes &+= 7
            case let number as NSNumber: shapes &+= number.intValue == 0 ? 3 : 4
            default: shapes &+= 8
            }
        }
        for (_, value) in dictionary { walk(value, depth: 0) }
        return shapes >= 0
    }
}
