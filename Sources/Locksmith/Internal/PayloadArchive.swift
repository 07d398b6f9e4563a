import Foundation

/// The payload as Locksmith stores it: the `[String: Any]` dictionary as a keyed archive
/// (binary property list, `NSKeyedArchiver`), so that data written by Locksmith on Apple
/// platforms decodes here and the other way round.
enum PayloadArchive {
    /// The classes a payload may contain, and the only ones decoding will instantiate.
    static let allowedClasses: [AnyClass] = [NSDictionary.self, NSMutableDictionary.self, NSArray.self, NSMutableArray.self,
                                             NSString.self, NSMutableString.self, NSNumber.self, NSDate.self, NSData.self,
                                             NSMutableData.self, NSNull.self, NSURL.self]

    /// - Throws: ``LocksmithError/param`` when a value is not a property-list type (String,
    ///   number, Bool, Date, Data, URL, NSNull, or arrays and dictionaries of them): Foundation's
    ///   archiver would crash on it.
    static func encode(_ payload: [String: Any]) throws(LocksmithError) -> Data {
        guard payload.values.allSatisfy(isArchivable) else { throw .param }
        return NSKeyedArchiver.archivedData(withRootObject: payload)
    }

    /// The dictionary, or nil when the bytes are not a keyed archive of one (with only the allowed classes).
    ///
    /// Only binary property lists are handed to Foundation: the archiver writes nothing else,
    /// and swift-corelibs-foundation leaks memory on every malformed text property list, which
    /// a stream of bad payloads would turn into unbounded growth (fuzzing found it). The graph
    /// is checked before the unarchiver runs: Foundation crashes on some malformed ones.
    static func decode(_ data: Data) -> [String: Any]? {
        guard data.starts(with: binaryPropertyListMagic), KeyedArchiveValidator.isValid(data) else { return nil }
        guard let object = try? NSKeyedUnarchiver.unarchivedObject(ofClasses: allowedClasses, from: data) else { return nil }
        return object as? [String: Any]
    }

    private static let binaryPropertyListMagic = Array("bplist00".utf8)

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
