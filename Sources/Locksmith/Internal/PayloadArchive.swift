import Foundation

/// The payload as Locksmith stores it: the `[String: Any]` dictionary as a keyed archive
/// (binary property list in NSKeyedArchiver's format), so that data written by Locksmith on
/// Apple platforms decodes here and the other way round. ``KeyedArchiveWriter`` writes it
/// (Foundation's archiver loses values on Linux, see there); ``KeyedArchiveReader`` reads it
/// (Foundation's unarchiver crashes on malformed archives, see there).
enum PayloadArchive {
    /// - Throws: ``LocksmithError/param`` when a value is not a property-list type (String,
    ///   number, Bool, Date, Data, URL, NSNull, or arrays and string-keyed dictionaries of them).
    static func encode(_ payload: [String: Any]) throws(LocksmithError) -> Data {
        try KeyedArchiveWriter.archive(payload)
    }

    /// The dictionary, or nil when the bytes are not a keyed archive of one (with only the
    /// allowed classes, within the reader's bounds).
    static func decode(_ data: Data) -> [String: Any]? {
        KeyedArchiveReader.decodeDictionary(data)
    }
}
