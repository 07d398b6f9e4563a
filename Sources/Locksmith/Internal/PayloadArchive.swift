import Foundation

/// The payload as Locksmith stores it: the `[String: Any]` dictionary as a keyed archive
/// (binary property list, `NSKeyedArchiver`), so that data written by Locksmith on Apple
/// platforms decodes here and the other way round. Foundation's archiver writes it; reading,
/// from stores other programs can write, is ``KeyedArchiveReader``'s.
enum PayloadArchive {
    /// - Throws: ``LocksmithError/param`` when a value is not a property-list type (String,
    ///   number, Bool, Date, Data, URL, NSNull, or arrays and dictionaries of them): Foundation's
    ///   archiver would crash on it.
    static func encode(_ payload: [String: Any]) throws(LocksmithError) -> Data {
        guard payload.values.allSatisfy(isArchivable) else { throw .param }
        return NSKeyedArchiver.archivedData(withRootObject: payload)
    }

    /// The dictionary, or nil when the bytes are not a keyed archive of one (with only the
    /// allowed classes). Read by ``KeyedArchiveReader``, not by Foundation's unarchiver,
    /// which crashes on some malformed archives (see there).
    static func decode(_ data: Data) -> [String: Any]? {
        KeyedArchiveReader.decodeDictionary(data)
    }

    static func isArchivable(_ value: Any) -> Bool {
        switch value {
        case is String, is NSString, is Bool, is Int, is Int8, is Int16, is Int32, is Int64, is UInt, is UInt8, is UInt16,
             is UInt32, is UInt64, is Double, is Float, is NSNumber, is Date, is NSDate, is Data, is NSData, is URL, is NSURL, is NSNull:
            return true
        case let array as [Any]:
            return array.allSatisfy(isArchivable)
        case let dictionary as [String: Any]:
            return dictionary.values.allSatisfy(isArchivable)
        case let dictionary as [AnyHashable: Any]:
            return dictionary.allSatisfy { isArchivable($0.key.base) && isArchivable($0.value) }
        default:
            return false
        }
    }
}
