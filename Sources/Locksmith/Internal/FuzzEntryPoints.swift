import Foundation

/// Locksmith's parser of untrusted bytes (a stored payload), for the fuzz targets. Not API.
@_spi(Fuzzing) public enum LocksmithFuzzEntryPoints {
    /// Decodes a keyed-archive payload; whether it was a dictionary.
    public static func payload(_ bytes: [UInt8]) -> Bool {
        PayloadArchive.decode(Data(bytes)) != nil
    }
}
