import Foundation

/// Locksmith's parser of untrusted bytes (a stored payload), for the fuzz targets. Not API.
@_spi(Fuzzing) public enum LocksmithFuzzEntryPoints {
    /// Decodes a keyed-archive payload and walks what came out, so that the fuzzer (which sees
    /// coverage only in our code, not in Foundation's) keeps inputs that decode to new shapes.
    /// Whether it was a dictionary.
    public static func payload(_ bytes: [UInt8]) -> Bool {
        guard let dictionary = PayloadArchive.decode(Data(bytes)) else { return false }
        var shapes = 0
        func walk(_ value: Any, depth: Int) {
            guard depth < 8 else { return }
            switch value {
            case let string as String: shapes &+= string.isEmpty ? 1 : 2
            case let number as NSNumber: shapes &+= number.intValue == 0 ? 3 : 4
            case let data as Data: shapes &+= data.isEmpty ? 5 : 6
            case is Date: shapes &+= 7
            case let array as [Any]: for element in array { walk(element, depth: depth + 1) }
            case let nested as [String: Any]: for (_, element) in nested { walk(element, depth: depth + 1) }
            default: shapes &+= 8
            }
        }
        for (_, value) in dictionary { walk(value, depth: 0) }
        return shapes >= 0
    }
}
